package dev.ordersaga.sandbox;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One endpoint: a method, a path template such as {@code /v1/charges/{key}}, and its handler. */
record Route(String method, Pattern path, Function<Request, Response> handler) {

    private static final Pattern PARAM = Pattern.compile("\\{[^/}]+}");

    static Route get(String template, Function<Request, Response> handler) {
        return new Route("GET", compile(template), handler);
    }

    static Route post(String template, Function<Request, Response> handler) {
        return new Route("POST", compile(template), handler);
    }

    /** The values of the template's parameters if this route serves the call. */
    Optional<List<String>> match(String method, String path) {
        Matcher matcher = this.path.matcher(path);
        if (!this.method.equals(method) || !matcher.matches()) {
            return Optional.empty();
        }
        List<String> params = new ArrayList<>();
        for (int i = 1; i <= matcher.groupCount(); i++) {
            params.add(matcher.group(i));
        }
        return Optional.of(params);
    }

    private static Pattern compile(String template) {
        StringBuilder regex = new StringBuilder();
        Matcher param = PARAM.matcher(template);
        int last = 0;
        while (param.find()) {
            regex.append(Pattern.quote(template.substring(last, param.start()))).append("([^/]+)");
            last = param.end();
        }
        regex.append(Pattern.quote(template.substring(last)));
        return Pattern.compile(regex.toString());
    }
}
