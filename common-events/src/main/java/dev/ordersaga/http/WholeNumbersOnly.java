package dev.ordersaga.http;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.jackson.ObjectMapperCustomizer;
import jakarta.inject.Singleton;

/**
 * A request's whole-number field takes a whole number only: Jackson by default cuts {@code "quantity": 2.9} to 2,
 * and a client would be sent, charged for or stocked with other than what it asked. Refused, the value is answered
 * as an invalid field ({@link ProblemMappers#wrongType}), in every service. The events and the providers' answers
 * have mappers of their own, which this leaves alone.
 */
@Singleton
public class WholeNumbersOnly implements ObjectMapperCustomizer {

    @Override
    public void customize(ObjectMapper mapper) {
        mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
    }
}
