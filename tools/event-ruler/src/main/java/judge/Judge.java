package judge;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import software.amazon.event.ruler.JsonRuleCompiler;
import software.amazon.event.ruler.Machine;

/**
 * Judges EventBridge event patterns with event-ruler, the library EventBridge's pattern language comes from.
 *
 * <p>Reads one case a line on stdin, {@code {"id": ..., "pattern": P, "event": E}}, where P and E are either JSON
 * text (a string, passed to event-ruler unchanged, so number spellings and duplicate keys survive) or a JSON value.
 * Writes one line a case, in order: {@code {"id", "valid", "error"?, "match"?}}. {@code valid} is
 * {@code JsonRuleCompiler.check} finding nothing wrong; {@code match} is whether {@code rulesForJSONEvent} (array
 * consistent since event-ruler 2.0) names the rule; {@code error} is event-ruler's reason for an invalid pattern, or
 * what went wrong with the event or the line.
 *
 * <p>The input is bounded: a line over {@link #MAX_LINE_BYTES} is answered with an error and skipped, and the case
 * line may nest {@link #MAX_CASE_DEPTH} levels.
 */
public final class Judge {
    /** A case holds a pattern and an event; EventBridge's own bound on an event is 256 KB. */
    static final int MAX_LINE_BYTES = 1 << 20;
    static final int MAX_CASE_DEPTH = 256;

    private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_CASE_DEPTH)
                    .maxStringLength(MAX_LINE_BYTES)
                    .build())
            .build());

    private Judge() { }

    public static void main(String[] args) throws IOException {
        InputStream in = new BufferedInputStream(System.in, 1 << 16);
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        boolean overLimit = false;
        int b;
        while (true) {
            b = in.read();
            if (b == '\n' || b == -1) {
                if (overLimit) {
                    answer(out, error(null, "case line over " + MAX_LINE_BYTES + " bytes"));
                } else if (line.size() > 0) {
                    answer(out, judge(line.toString(StandardCharsets.UTF_8)));
                }
                line.reset();
                overLimit = false;
                // Answers are flushed when the input pauses, so a driver that streams cases gets them promptly.
                if (b == -1 || in.available() == 0) {
                    out.flush();
                }
                if (b == -1) {
                    return;
                }
            } else if (!overLimit) {
                if (line.size() >= MAX_LINE_BYTES) {
                    overLimit = true;
                    line.reset();
                } else {
                    line.write(b);
                }
            }
        }
    }

    private static void answer(Writer out, ObjectNode answer) throws IOException {
        out.write(JSON.writeValueAsString(answer));
        out.write('\n');
    }

    private static ObjectNode error(JsonNode id, String message) {
        ObjectNode answer = JSON.createObjectNode();
        answer.set("id", id);
        answer.put("valid", false);
        answer.put("error", message);
        return answer;
    }

    static ObjectNode judge(String caseLine) {
        JsonNode testCase;
        try {
            testCase = JSON.readTree(caseLine);
        } catch (JsonProcessingException e) {
            return error(null, "case line is not JSON: " + e.getOriginalMessage());
        }
        if (!testCase.isObject() || !testCase.has("pattern") || !testCase.has("event")) {
            return error(testCase.get("id"), "case line must be an object with pattern and event");
        }
        JsonNode id = testCase.get("id");
        String pattern = text(testCase.get("pattern"));
        String event = text(testCase.get("event"));

        String problem = JsonRuleCompiler.check(pattern);
        if (problem != null) {
            // Jackson appends the location and a quote of the source on the next lines; the reason is the first.
            return error(id, problem.lines().findFirst().orElse(problem));
        }
        ObjectNode answer = JSON.createObjectNode();
        answer.set("id", id);
        answer.put("valid", true);
        Machine machine = Machine.builder().build();
        try {
            machine.addRule("pattern", pattern);
        } catch (Exception | StackOverflowError e) {
            // The compiler's check passed but the machine refused the rule (e.g. too many fields).
            return error(id, "addRule: " + e);
        }
        try {
            answer.put("match", !machine.rulesForJSONEvent(event).isEmpty());
        } catch (Exception | StackOverflowError e) {
            answer.put("error", "event: " + e);
        }
        return answer;
    }

    private static String text(JsonNode node) {
        return node.isTextual() ? node.textValue() : node.toString();
    }
}
