package dev.weir.ingester.server;

import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;

/**
 * Answers INVALID_ARGUMENT, with the parser's reason, to a request message that does not decode.
 * grpc-java parses requests inside the server's listener and closes a call whose parse threw with
 * UNKNOWN ("Application error processing RPC") whatever the exception says, so a client takes a
 * broken body for a server error and retries it forever. Here each method's request marshaller
 * hands a parse failure on as a value instead of throwing, and the listener closes the call.
 *
 * <p>Wrap a service before the interceptors, so they see (and count) the close. Stateless.
 */
public final class UndecodableRequests {
  private UndecodableRequests() {}

  /** A message whose parse failed. */
  private record Undecodable(RuntimeException error) {}

  /** {@code service} with every method's request decoding guarded. */
  public static ServerServiceDefinition guard(ServerServiceDefinition service) {
    ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
    for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
      b.addMethod(guard(m));
    }
    return b.build();
  }

  private static <Q, R> ServerMethodDefinition<Object, R> guard(ServerMethodDefinition<Q, R> def) {
    MethodDescriptor<Q, R> method = def.getMethodDescriptor();
    MethodDescriptor.Marshaller<Q> requests = method.getRequestMarshaller();
    MethodDescriptor.Marshaller<Object> lenient = new MethodDescriptor.Marshaller<>() {
      @Override
      @SuppressWarnings("unchecked")
      public InputStream stream(Object value) {
        return requests.stream((Q) value);
      }

      @Override
      public Object parse(InputStream stream) {
        try {
          return requests.parse(stream);
        } catch (RuntimeException e) {
          return new Undecodable(e);
        }
      }
    };
    MethodDescriptor<Object, R> guarded = method.toBuilder(lenient, method.getResponseMarshaller()).build();
    ServerCallHandler<Q, R> handler = def.getServerCallHandler();
    return ServerMethodDefinition.create(guarded, (call, headers) -> startCall(method, handler, call, headers));
  }

  private static <Q, R> ServerCall.Listener<Object> startCall(MethodDescriptor<Q, R> method,
      ServerCallHandler<Q, R> handler, ServerCall<Object, R> call, Metadata headers) {
    ServerCall.Listener<Q> next = handler.startCall(new TypedCall<>(call, method), headers);
    return new ServerCall.Listener<>() {
      private boolean closed;

      @Override
      @SuppressWarnings("unchecked")
      public void onMessage(Object message) {
        if (closed) {
          return;
        }
        if (message instanceof Undecodable u) {
          closed = true;
          String reason = u.error() instanceof io.grpc.StatusRuntimeException s && s.getStatus().getCause() != null
              ? s.getStatus().getCause().getMessage()
              : u.error().getMessage();
          call.close(Status.INVALID_ARGUMENT.withDescription("cannot decode the " + method.getFullMethodName()
              + " request: " + reason).withCause(u.error()), new Metadata());
          return;
        }
        next.onMessage((Q) message);
      }

      @Override
      public void onHalfClose() {
        if (!closed) {
          next.onHalfClose();
        }
      }

      @Override
      public void onCancel() {
        next.onCancel();
      }

      @Override
      public void onComplete() {
        next.onComplete();
      }

      @Override
      public void onReady() {
        if (!closed) {
          next.onReady();
        }
      }
    };
  }

  /** The transport's call as the handler's types; only the request type differs. */
  private static final class TypedCall<Q, R> extends ServerCall<Q, R> {
    private final ServerCall<Object, R> call;
    private final MethodDescriptor<Q, R> method;

    TypedCall(ServerCall<Object, R> call, MethodDescriptor<Q, R> method) {
      this.call = call;
      this.method = method;
    }

    @Override
    public void request(int numMessages) {
      call.request(numMessages);
    }

    @Override
    public void sendHeaders(Metadata headers) {
      call.sendHeaders(headers);
    }

    @Override
    public void sendMessage(R message) {
      call.sendMessage(message);
    }

    @Override
    public boolean isReady() {
      return call.isReady();
    }

    @Override
    public void close(Status status, Metadata trailers) {
      call.close(status, trailers);
    }

    @Override
    public boolean isCancelled() {
      return call.isCancelled();
    }

    @Override
    public void setMessageCompression(boolean enabled) {
      call.setMessageCompression(enabled);
    }

    @Override
    public void setCompression(String compressor) {
      call.setCompression(compressor);
    }

    @Override
    public void setOnReadyThreshold(int numBytes) {
      call.setOnReadyThreshold(numBytes);
    }

    @Override
    public Attributes getAttributes() {
      return call.getAttributes();
    }

    @Override
    public @Nullable String getAuthority() {
      return call.getAuthority();
    }

    @Override
    public MethodDescriptor<Q, R> getMethodDescriptor() {
      return method;
    }
  }
}
