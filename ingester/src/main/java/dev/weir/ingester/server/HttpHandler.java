package dev.weir.ingester.server;

/** Handles one HTTP request; runs on a handler thread and may block. */
@FunctionalInterface
public interface HttpHandler {
  void handle(HttpExchange exchange) throws Exception;
}
