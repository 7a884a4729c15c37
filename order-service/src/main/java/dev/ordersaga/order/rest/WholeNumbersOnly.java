package dev.ordersaga.order.rest;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.jackson.ObjectMapperCustomizer;
import jakarta.inject.Singleton;

/**
 * A request's whole-number field takes a whole number only: Jackson by default cuts {@code "quantity": 2.9} to 2,
 * and the customer would be sent, and charged for, other than what they asked. Refused, the value is answered as an
 * invalid field ({@link OrderProblemMappers#wrongType}). The events have their own mapper (EventCodec), which this
 * leaves alone.
 */
@Singleton
public class WholeNumbersOnly implements ObjectMapperCustomizer {

    @Override
    public void customize(ObjectMapper mapper) {
        mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
    }
}
