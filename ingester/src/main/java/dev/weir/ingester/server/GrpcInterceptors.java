package dev.weir.ingester.server;

import dev.weir.storage.errors.ClientErrorException;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Server interceptors: the tenant from the {@code x-scope-orgid} metadata into the call's
 * {@link Context}, and request durations into {@link RequestMetrics}.
 */
public final class GrpcInterceptors {
  public static final Metadata.Key<String> ORG_ID =
      Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER);
  /** The resolved tenant of the current call. */
  public static final Context.Key<String> TENANT = Context.key("weir-tenant");
  public static final Metadata.Key<String> READ_CONSISTENCY =
      Metadata.Key.of("x-read-consistency", Metadata.ASCII_STRING_MARSHALLER);
  /** Whether the current call asked for strong read consistency. */
  public static final Context.Key<Boolean> STRONG_READ = Context.key("weir-strong-read");

  private GrpcInterceptors() {}

  /** Resolves the tenant, or closes the call with UNAUTHENTICATED/INVALID_ARGUMENT. */
  public static ServerInterceptor tenant(Tenants tenants) {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        String tenant;
        try {
          tenant = tenants.resolve(headers.get(ORG_ID));
        } catch (ClientErrorException e) {
          call.close(GrpcStatuses.toStatus(e).getStatus(), new Metadata());
          return new ServerCall.Listener<>() {};
        }
        boolean strong = "strong".equalsIgnoreCase(headers.get(READ_CONSISTENCY));
        return Contexts.interceptCall(Context.current().withValue(TENANT, tenant).withValue(STRONG_READ, strong), call,
            headers, next);
      }
    };
  }

  /** Records every call's duration by full method name and status code. */
  public static ServerInterceptor metrics(RequestMetrics metrics) {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        long start = System.nanoTime();
        String route = "/" + call.getMethodDescriptor().getFullMethodName();
        ServerCall<Q, R> timed = new SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            metrics.record("gRPC", route, status.getCode().name(), System.nanoTime() - start);
            super.close(status, trailers);
          }
        };
        return next.startCall(timed, headers);
      }
    };
  }
}
