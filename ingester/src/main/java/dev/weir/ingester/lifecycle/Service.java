package dev.weir.ingester.lifecycle;

import org.jspecify.annotations.Nullable;

/**
 * A long-running part of Weir. {@link ServiceManager} starts services in order and stops them in
 * reverse, so a service may rely on those started before it.
 *
 * <p>Implementations document their own thread-safety; the manager calls start and stop from one
 * thread.
 */
public interface Service {
  /** Short name for logs and the /ready page. */
  String name();

  /** Starts the service; returns when it serves (or throws, and start-up aborts). */
  void start() throws Exception;

  /** Stops the service and releases its resources; called once, also after a failed start. */
  void stop() throws Exception;

  /**
   * Why the service is running but not ready to serve (for example still catching up), or null
   * when it is ready.
   */
  default @Nullable String notReadyReason() {
    return null;
  }
}
