package dev.weir.ingester.server;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the gRPC calls in flight, so the handler pool's queue is bounded and a flood of calls is
 * refused instead of queued until the heap runs out. grpc-java gives every call a serializing
 * executor that submits at most one task at a time to the pool, so with at most {@code maxCalls}
 * calls admitted the pool's queue never holds more than {@code maxCalls} tasks.
 *
 * <p>The server runs its own work (method lookup) on the transport thread, and asks
 * {@link #getExecutor} for each call's executor there: an admitted call gets the pool; a call
 * over the limit gets none (it stays on the transport thread), and {@link #interceptor()}, which
 * must run first, closes it at once with RESOURCE_EXHAUSTED (429: back off and retry, as for a
 * rate limit) before its request is read. UNAVAILABLE would say the server is down, which it is
 * not. An admitted call's permit returns when the call completes or is cancelled.
 *
 * <p>Thread-safe.
 */
final class GrpcCallAdmission implements ServerCallExecutorSupplier {
  private final Executor pool;
  private final int maxCalls;
  private final Semaphore permits;
  private final RequestMetrics metrics;
  private final Set<ServerCall<?, ?>> refused = ConcurrentHashMap.newKeySet();

  /**
   * @param pool runs the admitted calls; its queue must hold at least {@code maxCalls} tasks
   * @param maxCalls most calls admitted at once (running or waiting for a thread)
   */
  GrpcCallAdmission(Executor pool, int maxCalls, RequestMetrics metrics) {
    this.pool = pool;
    this.maxCalls = maxCalls;
    this.permits = new Semaphore(maxCalls);
    this.metrics = metrics;
  }

  @Override
  public <Q, R> @Nullable Executor getExecutor(ServerCall<Q, R> call, Metadata headers) {
    if (permits.tryAcquire()) {
      return pool;
    }
    refused.add(call);
    return null;
  }

  /** Closes refused calls and returns admitted calls' permits; must be the first interceptor. */
  ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        if (refused.remove(call)) {
          String route = "/" + call.getMethodDescriptor().getFullMethodName();
          metrics.record("gRPC", route, Status.Code.RESOURCE_EXHAUSTED.name(), 0);
          call.close(Status.RESOURCE_EXHAUSTED.withDescription("too many gRPC calls in flight (" + maxCalls
              + " running or queued): retry later"), new Metadata());
          return new ServerCall.Listener<>() {};
        }
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
          if (released.compareAndSet(false, true)) {
            permits.release();
          }
        };
        ServerCall.Listener<Q> listener;
        try {
          listener = next.startCall(call, headers);
        } catch (RuntimeException | Error e) {
          release.run();
          throw e;
        }
        return new SimpleForwardingServerCallListener<>(listener) {
          @Override
          public void onComplete() {
            try {
              super.onComplete();
            } finally {
              release.run();
            }
          }

          @Override
          public void onCancel() {
            try {
              super.onCancel();
            } finally {
              release.run();
            }
          }
        };
      }
    };
  }
}
