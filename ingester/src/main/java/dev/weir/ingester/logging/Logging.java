package dev.weir.ingester.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/** Configures logback from {@link LogConfig}: one line per event on stderr. */
public final class Logging {
  private Logging() {}

  public static void configure(LogConfig config) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
      return; // another SLF4J backend (e.g. in an embedding test) keeps its own configuration
    }
    ctx.reset();
    LineLayout layout = new LineLayout();
    layout.setFormat(config.format());
    layout.setContext(ctx);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setLayout(layout);
    encoder.setContext(ctx);
    encoder.start();
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.setContext(ctx);
    appender.start();
    Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(config.level(), Level.INFO));
    root.addAppender(appender);
    // Libraries chatty at INFO (Kafka client configs, Netty) log at WARN unless debugging.
    if (!"debug".equals(config.level())) {
      ctx.getLogger("org.apache.kafka").setLevel(Level.WARN);
      ctx.getLogger("io.netty").setLevel(Level.WARN);
      ctx.getLogger("io.grpc").setLevel(Level.WARN);
      ctx.getLogger("io.etcd").setLevel(Level.WARN);
      ctx.getLogger("io.vertx").setLevel(Level.WARN);
    }
    // gRPC and Netty log through java.util.logging.
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
  }
}
