package dev.weir.ingester.server;

import dev.weir.ingester.ingest.ReadLevel;
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
  public static final Metadata.Key<String> READ_CONSISTENCY_OFFSETS =
      Metadata.Key.of("x-read-consistency-offsets", Metadata.ASCII_STRING_MARSHALLER);
  /** What the current call asked to see ({@code x-read-consistency}, {@code x-read-consistency-offsets}). */
  public static final Context.Key<ReadLevel> READ_LEVEL = Context.key("weir-read-level");
  /** The distributor's answer to a Push in Kafka mode (see {@link ReadLevel#PRODUCED_OFFSETS_HEADER}). */
  public static final Metadata.Key<String> PRODUCED_OFFSETS =
      Metadata.Key.of("x-weir-produced-offsets", Metadata.ASCII_STRING_MARSHALLER);
  /** Headers the current call's handler adds to its response (sent with the first message). */
  public static final Context.Key<Metadata> RESPONSE_HEADERS = Context.key("weir-response-headers");

  private GrpcInterceptors() {}

  /**
   * Resolves the tenant and the read level, or closes the call with UNAUTHENTICATED /
   * INVALID_ARGUMENT naming what is wrong; lets the handler add response headers
   * ({@link #RESPONSE_HEADERS}).
   */
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
        ReadLevel level;
        try {
          level = ReadLevel.parse(headers.get(READ_CONSISTENCY), headers.get(READ_CONSISTENCY_OFFSETS));
        } catch (ClientErrorException e) {
          call.close(GrpcStatuses.toStatus(e).getStatus(), new Metadata());
          return new ServerCall.Listener<>() {};
        }
        Metadata extra = new Metadata();
        ServerCall<Q, R> withExtra = new SimpleForwardingServerCall<>(call) {
          @Override
          public void sendHeaders(Metadata h) {
            h.merge(extra);
            super.sendHeaders(h);
          }
        };
        return Contexts.interceptCall(Context.current().withValue(TENANT, tenant).withValue(READ_LEVEL, level)
            .withValue(RESPONSE_HEADERS, extra), withExtra, headers, next);
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
