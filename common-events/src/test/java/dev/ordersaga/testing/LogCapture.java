package dev.ordersaga.testing;

import dev.ordersaga.eventing.Correlation;
import org.jboss.logmanager.ExtLogRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Keeps the log lines of one logger category (and its children) while open, each with the correlation id that
 * was in the MDC when it was written: what an operator would grep for one saga.
 */
public final class LogCapture extends Handler implements AutoCloseable {

    public record Line(Level level, String message, String correlationId) {
    }

    private final Logger logger;
    private final List<Line> lines = new ArrayList<>();

    private LogCapture(String category) {
        this.logger = Logger.getLogger(category);
        logger.addHandler(this);
    }

    public static LogCapture of(String category) {
        return new LogCapture(category);
    }

    public static LogCapture of(Class<?> category) {
        return of(category.getName());
    }

    @Override
    public void publish(LogRecord record) {
        String message = record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
        String correlationId = record instanceof ExtLogRecord ext ? ext.getMdc(Correlation.MDC_KEY) : null;
        synchronized (lines) {
            lines.add(new Line(record.getLevel(), message, correlationId));
        }
    }

    public List<Line> matching(Predicate<Line> predicate) {
        synchronized (lines) {
            return lines.stream().filter(predicate).toList();
        }
    }

    public List<Line> containing(String text) {
        return matching(l -> l.message() != null && l.message().contains(text));
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
