package dev.ordersaga.shipping.testing;

import dev.ordersaga.eventing.Correlation;
import org.jboss.logmanager.ExtLogRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Keeps the log records of a logger category (and the correlation id in the MDC when each was written). */
public final class LogCapture extends Handler implements AutoCloseable {

    /** A log line as written: level, formatted message, and the correlation id of the step it belongs to. */
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

    @Override
    public void publish(LogRecord record) {
        String correlationId = record instanceof ExtLogRecord ext ? ext.getMdc(Correlation.MDC_KEY) : null;
        String message = record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
        synchronized (lines) {
            lines.add(new Line(record.getLevel(), message, correlationId));
        }
    }

    public List<Line> containing(String text) {
        synchronized (lines) {
            return lines.stream().filter(l -> l.message() != null && l.message().contains(text)).toList();
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
