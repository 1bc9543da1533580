package dev.weir.ingester.querier;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.SettableFuture;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.PartitionLag;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Calls many targets at once and waits for all: each call carries the tenant
 * ({@code x-scope-orgid}), the read level ({@code x-read-consistency: strong},
 * {@code x-read-consistency-offsets}) when asked and the callee is an ingester, and the {@code querier.timeout} deadline. A call goes to its target's
 * first replica; when that fails with a server error (unreachable, deadline, internal) it is made
 * again to the next replica, with a new deadline, so a target of n replicas takes at most n
 * timeouts. A target whose every replica failed fails the whole query (no partial results) and the
 * other calls are cancelled: a client error a source reported keeps its status (400, 429) and is
 * not retried elsewhere, anything else is a server error (503); both name the sources.
 * Thread-safe.
 */
final class SourceCalls {
  /** One call to make: where, the sources' kind ({@code ingester} or {@code store-gateway}), what. */
  record Call<Q>(QuerySources.Target target, String kind, Q request) {}

  /** Starts one call on a stub that already carries the metadata and deadline. */
  @FunctionalInterface
  interface Invoker<Q, R> {
    ListenableFuture<R> start(IngesterGrpc.IngesterStub stub, IngesterGrpc.IngesterFutureStub futureStub, Q request);
  }

  private final QuerySources sources;
  private final Duration timeout;
  private final QuerierMetrics metrics;

  SourceCalls(QuerySources sources, Duration timeout, QuerierMetrics metrics) {
    this.sources = sources;
    this.timeout = timeout;
    this.metrics = metrics;
  }

  /** The results of every call, in call order. */
  <Q, R> List<R> all(String method, String tenant, ReadLevel level, List<Call<Q>> calls, Invoker<Q, R> invoker) {
    List<ListenableFuture<R>> futures = new ArrayList<>(calls.size());
    for (Call<Q> c : calls) {
      futures.add(attempt(method, tenant, level, c, invoker, 0, new ArrayList<>()));
    }
    try {
      return Futures.allAsList(futures).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted while querying " + calls.size() + " sources", e);
    } catch (ExecutionException e) {
      throw firstFailure(method, calls, futures);
    } finally {
      futures.forEach(f -> f.cancel(true));
    }
  }

  /** One call's outcome in {@link #each}: its answer, or the error of its last replica. */
  record Outcome<R>(@org.jspecify.annotations.Nullable R value, @org.jspecify.annotations.Nullable RuntimeException error) {}

  /**
   * Like {@link #all}, with the same failover, but a target whose every replica failed does not
   * fail the others: each call's outcome is returned, in call order. For answers that list their
   * sources one by one (a failed one is a row with its reason, not a failed request).
   */
  <Q, R> List<Outcome<R>> each(String method, String tenant, ReadLevel level, List<Call<Q>> calls,
      Invoker<Q, R> invoker) {
    List<ListenableFuture<R>> futures = new ArrayList<>(calls.size());
    for (Call<Q> c : calls) {
      futures.add(attempt(method, tenant, level, c, invoker, 0, new ArrayList<>()));
    }
    List<Outcome<R>> out = new ArrayList<>(calls.size());
    try {
      for (int i = 0; i < futures.size(); i++) {
        try {
          out.add(new Outcome<>(futures.get(i).get(), null));
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          out.add(new Outcome<>(null, cause instanceof RuntimeException r ? r
              : describe(method, calls.get(i).target().replicas().get(0), cause)));
        }
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted while asking " + calls.size() + " sources", e);
    } finally {
      futures.forEach(f -> f.cancel(true));
    }
  }

  /**
   * The call to replica {@code i} of the call's target, falling over to the next on a server
   * error; fails with the described error ({@link ClientErrorException} or
   * {@link ServerErrorException} naming every replica tried).
   */
  private <Q, R> ListenableFuture<R> attempt(String method, String tenant, ReadLevel level, Call<Q> c,
      Invoker<Q, R> invoker, int i, List<String> failures) {
    QuerySources.Source source = c.target().replicas().get(i);
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.ORG_ID, tenant);
    if (c.kind().equals("ingester")) {
      if (level.strong()) {
        md.put(GrpcInterceptors.READ_CONSISTENCY, "strong");
      }
      String offsets = level.offsetsHeader();
      if (offsets != null) {
        md.put(GrpcInterceptors.READ_CONSISTENCY_OFFSETS, offsets);
      }
    }
    var channel = sources.channel(source.address());
    var attach = MetadataUtils.newAttachHeadersInterceptor(md);
    long start = System.nanoTime();
    ListenableFuture<R> f = invoker.start(
        IngesterGrpc.newStub(channel).withInterceptors(attach)
            .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS),
        IngesterGrpc.newFutureStub(channel).withInterceptors(attach)
            .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS),
        c.request());
    f.addListener(() -> metrics.sourceCall(c.kind(), method, code(f), System.nanoTime() - start),
        MoreExecutors.directExecutor());
    return Futures.catchingAsync(f, Throwable.class, t -> {
      RuntimeException e = describe(method, source, t);
      if (e instanceof ClientErrorException) {
        throw e;
      }
      failures.add(e.getMessage());
      if (i + 1 < c.target().replicas().size()) {
        metrics.failover(c.kind());
        return attempt(method, tenant, level, c, invoker, i + 1, failures);
      }
      if (failures.size() == 1) {
        throw e;
      }
      throw new ServerErrorException(c.target().what() + ": every replica failed: " + String.join("; then ",
          failures), t);
    }, MoreExecutors.directExecutor());
  }

  private static String code(ListenableFuture<?> f) {
    try {
      Futures.getDone(f);
      return Status.Code.OK.name();
    } catch (ExecutionException e) {
      // A limit stops a stream by cancelling it.
      return e.getCause() instanceof ClientErrorException ? Status.Code.CANCELLED.name()
          : Status.fromThrowable(e.getCause()).getCode().name();
    } catch (RuntimeException e) {
      return Status.Code.CANCELLED.name();
    }
  }

  /** The error of the first call (in call order) that failed, naming its source. */
  private <Q> RuntimeException firstFailure(String method, List<Call<Q>> calls,
      List<? extends ListenableFuture<?>> futures) {
    for (int i = 0; i < futures.size(); i++) {
      ListenableFuture<?> f = futures.get(i);
      if (!f.isDone() || f.isCancelled()) {
        continue;
      }
      try {
        Futures.getDone(f);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        return cause instanceof ClientErrorException || cause instanceof ServerErrorException
            ? (RuntimeException) cause : describe(method, calls.get(i).target().replicas().get(0), cause);
      }
    }
    return new ServerErrorException(method + " failed on one of " + calls.size() + " sources");
  }

  private RuntimeException describe(String method, QuerySources.Source source, Throwable cause) {
    if (cause instanceof ClientErrorException c) {
      return c;
    }
    Status s = Status.fromThrowable(cause);
    String what = source.name() + ": " + method + " failed: " + s.getCode()
        + (s.getDescription() == null ? "" : " " + s.getDescription());
    return switch (s.getCode()) {
      case INVALID_ARGUMENT -> new ClientErrorException("bad_data", what, 400);
      case RESOURCE_EXHAUSTED -> new ClientErrorException("source_limit", what, 429);
      case DEADLINE_EXCEEDED -> new ServerErrorException(source.name() + ": " + method + " did not answer within "
          + timeout + " (--querier.timeout)", cause);
      default -> new ServerErrorException(what, cause);
    };
  }

  /** One source's QueryStream answer: its series, and its partition's freshness (ingesters in Kafka mode). */
  record Streamed(List<TimeSeries> series, List<PartitionLag> freshness) {}

  /** QueryStream's series, collected; the stream is cancelled once it alone passes a limit. */
  static Invoker<QueryRequest, Streamed> queryStream(QueryLimits limits) {
    return (stub, futureStub, request) -> {
      SettableFuture<Streamed> result = SettableFuture.create();
      stub.queryStream(request, new ClientResponseObserver<QueryRequest, QueryStreamResponse>() {
        private final List<TimeSeries> series = new ArrayList<>();
        private final List<PartitionLag> freshness = new ArrayList<>();
        private long samples;
        private ClientCallStreamObserver<QueryRequest> call;

        @Override
        public void beforeStart(ClientCallStreamObserver<QueryRequest> requestStream) {
          call = requestStream;
          result.addListener(() -> {
            if (result.isCancelled()) {
              requestStream.cancel("query cancelled", null);
            }
          }, MoreExecutors.directExecutor());
        }

        @Override
        public void onNext(QueryStreamResponse value) {
          series.addAll(value.getTimeseriesList());
          freshness.addAll(value.getFreshnessList());
          for (TimeSeries ts : value.getTimeseriesList()) {
            samples += ts.getSamplesCount();
          }
          try {
            limits.check(series.size(), samples);
          } catch (ClientErrorException e) {
            result.setException(e);
            call.cancel("over a query limit", null);
          }
        }

        @Override
        public void onError(Throwable t) {
          result.setException(t);
        }

        @Override
        public void onCompleted() {
          result.set(new Streamed(series, freshness));
        }
      });
      return result;
    };
  }
}
