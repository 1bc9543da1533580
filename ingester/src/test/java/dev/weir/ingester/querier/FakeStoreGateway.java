package dev.weir.ingester.querier;

import dev.weir.ingester.api.Matchers;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelNamesResponse;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.LabelValuesResponse;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A store-gateway stand-in: the real {@code weir.Ingester} service over canned series (kept in
 * label order), honouring time range and matchers like the ingester, one series per message.
 * Records each call's request and metadata; can be told to fail or to never answer.
 */
final class FakeStoreGateway extends IngesterGrpc.IngesterImplBase {
  final List<TimeSeries> series = new ArrayList<>();
  final List<Object> requests = new CopyOnWriteArrayList<>();
  final List<Metadata> headers = new CopyOnWriteArrayList<>();
  volatile Status failWith;
  volatile boolean hang;

  FakeStoreGateway(List<TimeSeries> canned) {
    series.addAll(canned);
    series.sort((a, b) -> labels(a).compareTo(labels(b)));
  }

  static Labels labels(TimeSeries ts) {
    List<String> pairs = new ArrayList<>();
    for (Label l : ts.getLabelsList()) {
      pairs.add(l.getName());
      pairs.add(l.getValue());
    }
    return Labels.of(pairs.toArray(String[]::new));
  }

  /** Records the metadata of every call. */
  ServerInterceptor recorder() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata md, ServerCallHandler<Q, R> next) {
        headers.add(md);
        return next.startCall(call, md);
      }
    };
  }

  private boolean refuse(Object request, StreamObserver<?> out) {
    requests.add(request);
    if (hang) {
      return true;
    }
    if (failWith != null) {
      out.onError(failWith.asRuntimeException());
      return true;
    }
    return false;
  }

  private List<TimeSeries> matching(long mint, long maxt, List<LabelMatcher> matchers) {
    List<Matcher> ms = Matchers.fromProto(matchers);
    List<TimeSeries> out = new ArrayList<>();
    for (TimeSeries ts : series) {
      Labels l = labels(ts);
      if (!ms.stream().allMatch(m -> m.matches(l))) {
        continue;
      }
      TimeSeries.Builder b = TimeSeries.newBuilder().addAllLabels(ts.getLabelsList());
      for (Sample s : ts.getSamplesList()) {
        if (s.getTimestamp() >= mint && s.getTimestamp() <= maxt) {
          b.addSamples(s);
        }
      }
      if (b.getSamplesCount() > 0) {
        out.add(b.build());
      }
    }
    return out;
  }

  @Override
  public void queryStream(QueryRequest request, StreamObserver<QueryStreamResponse> out) {
    if (refuse(request, out)) {
      return;
    }
    for (TimeSeries ts : matching(request.getStartTimestampMs(), request.getEndTimestampMs(),
        request.getMatchersList())) {
      out.onNext(QueryStreamResponse.newBuilder().addTimeseries(ts).build());
    }
    out.onCompleted();
  }

  @Override
  public void labelNames(LabelNamesRequest request, StreamObserver<LabelNamesResponse> out) {
    if (refuse(request, out)) {
      return;
    }
    TreeSet<String> names = new TreeSet<>();
    for (TimeSeries ts : matching(request.getStartTimestampMs(), request.getEndTimestampMs(),
        request.getMatchersList())) {
      ts.getLabelsList().forEach(l -> names.add(l.getName()));
    }
    out.onNext(LabelNamesResponse.newBuilder().addAllLabelNames(names).build());
    out.onCompleted();
  }

  @Override
  public void labelValues(LabelValuesRequest request, StreamObserver<LabelValuesResponse> out) {
    if (refuse(request, out)) {
      return;
    }
    TreeSet<String> values = new TreeSet<>();
    for (TimeSeries ts : matching(request.getStartTimestampMs(), request.getEndTimestampMs(),
        request.getMatchersList())) {
      String v = labels(ts).get(request.getLabelName());
      if (v != null) {
        values.add(v);
      }
    }
    out.onNext(LabelValuesResponse.newBuilder().addAllLabelValues(values).build());
    out.onCompleted();
  }
}
