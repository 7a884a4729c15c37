package dev.ordersaga.systemtest.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.stream.StreamSupport;

/** The objects of one rendered overlay, as {@code kubectl apply -k} would create them. */
record Rendered(String overlay, List<JsonNode> objects) {

    private static final YAMLMapper YAML = new YAMLMapper();

    static Rendered parse(String overlay, String yaml) {
        List<JsonNode> objects = new ArrayList<>();
        try (MappingIterator<JsonNode> documents = YAML.readerFor(JsonNode.class).readValues(yaml)) {
            while (documents.hasNext()) {
                JsonNode document = documents.next();
                if (document != null && document.isObject()) {
                    objects.add(document);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the rendered " + overlay + " overlay is not YAML", e);
        }
        return new Rendered(overlay, List.copyOf(objects));
    }

    List<JsonNode> ofKind(String kind) {
        return objects.stream().filter(o -> kind.equals(o.path("kind").asText())).toList();
    }

    Optional<JsonNode> find(String kind, String name) {
        return ofKind(kind).stream().filter(o -> name.equals(name(o))).findFirst();
    }

    static String name(JsonNode object) {
        return object.at("/metadata/name").asText();
    }

    /** "Deployment order-service" */
    static String describe(JsonNode object) {
        return object.path("kind").asText() + " " + name(object);
    }

    static List<JsonNode> list(JsonNode node) {
        return node.isArray() ? StreamSupport.stream(node.spliterator(), false).toList() : List.of();
    }

    /** The containers and init containers of a workload's pod template. */
    static List<JsonNode> containers(JsonNode workload) {
        JsonNode pod = workload.at("/spec/template/spec");
        List<JsonNode> all = new ArrayList<>(list(pod.path("initContainers")));
        all.addAll(list(pod.path("containers")));
        return all;
    }

    /** The value of a key of a rendered ConfigMap or Secret (decoded), if both are there. */
    Optional<String> value(String kind, String name, String key) {
        return find(kind, name).flatMap(object -> {
            if ("Secret".equals(kind)) {
                JsonNode plain = object.path("stringData").path(key);
                if (plain.isValueNode()) {
                    return Optional.of(plain.asText());
                }
                JsonNode encoded = object.path("data").path(key);
                // kustomize wraps a long value's base64 (a file's) at 70 characters
                return encoded.isValueNode()
                        ? Optional.of(new String(Base64.getMimeDecoder().decode(encoded.asText()), StandardCharsets.UTF_8))
                        : Optional.empty();
            }
            JsonNode data = object.path("data").path(key);
            if (data.isValueNode()) {
                return Optional.of(data.asText());
            }
            return object.path("binaryData").path(key).isValueNode() ? Optional.of("") : Optional.empty();
        });
    }
}
