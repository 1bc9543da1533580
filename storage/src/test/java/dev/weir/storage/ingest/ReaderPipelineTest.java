package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The reader pipeline without Kafka: records built in the record format, a pusher that records each call. */
class ReaderPipelineTest {
  /** One push: its tenant, its series (labels → sample timestamps) and the thread it ran on. */
  record Call(String tenant, Map<String, List<Long>> series, String thread, int metadata) {}

  /** What the pusher does before storing a push; throwing fails the push. */
  interface Behaviour {
    void before(String tenant, WriteRequest request) throws Exception;
  }

  /** Records every successful push; {@link #behaviour} may fail or block it. Thread-safe. */
  static final class FakePusher implements Pusher {
    final List<Call> calls = new CopyOnWriteArrayList<>();
    final AtomicInteger attempts = new AtomicInteger();
    volatile Behaviour behaviour = (t, r) -> { };

    @Override
    public void push(String tenant, WriteRequest request) {
      attempts.incrementAndGet();
      try {
        behaviour.before(tenant, request);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      Map<String, List<Long>> series = new LinkedHashMap<>();
      for (TimeSeries ts : request.getTimeseriesList()) {
        List<Long> samples = series.computeIfAbsent(RecordingPusher.key(ts), k -> new ArrayList<>());
        ts.getSamplesList().forEach(s -> samples.add(s.getTimestamp()));
      }
      calls.add(new Call(tenant, series, Thread.currentThread().getName(), request.getMetadataCount()));
    }

    /** Every sample timestamp pushed per tenant/series, in push order. */
    Map<String, List<Long>> samplesBySeries() {
      Map<String, List<Long>> out = new LinkedHashMap<>();
      for (Call c : calls) {
        c.series().forEach((k, v) -> out.computeIfAbsent(c.tenant() + "/" + k, x -> new ArrayList<>()).addAll(v));
      }
      return out;
    }
  }

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ReaderMetrics metrics = new ReaderMetrics(registry, 0);
  private final FakePusher pusher = new FakePusher();
  private final List<ReaderPipeline> pipelines = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void tearDown() {
    release.countDown();
    pipelines.forEach(ReaderPipeline::close);
    executor.shutdownNow();
  }

  private ReaderPipeline pipeline(int shards, long maxBufferedBytes, ReaderPipeline.@Nullable DeadLetter deadLetter) {
    ReaderPipeline p = new ReaderPipeline(shards, 10, maxBufferedBytes, pusher, deadLetter, metrics,
        System::currentTimeMillis, "test-reader");
    pipelines.add(p);
    return p;
  }

  private static WriteRequest request(long offset, int series) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < series; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("m"))
          .addLabels(Label.newBuilder().setName("s").setValue(String.valueOf(s)))
          .addSamples(Sample.newBuilder().setTimestamp(offset).setValue(offset)));
    }
    return b.build();
  }

  private static ConsumerRecord<byte[], ByteBuffer> record(long offset, String tenant, byte[] value) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(new RecordHeader(RecordFormat.VERSION_HEADER, RecordFormat.VERSION.getBytes(StandardCharsets.UTF_8)));
    byte[] key = tenant.getBytes(StandardCharsets.UTF_8);
    // As Kafka's ByteBufferDeserializer hands it over: a view inside a larger buffer, bytes before and after it.
    byte[] fetched = new byte[value.length + 13];
    Arrays.fill(fetched, (byte) 0xff);
    System.arraycopy(value, 0, fetched, 5, value.length);
    ByteBuffer view = ByteBuffer.wrap(fetched, 5, value.length).slice();
    return new ConsumerRecord<>("t", 0, offset, System.currentTimeMillis(), TimestampType.CREATE_TIME, key.length,
        value.length, key, view, headers, Optional.empty());
  }

  private static ConsumerRecord<byte[], ByteBuffer> record(long offset, int series) {
    return record(offset, "tenant", request(offset, series).toByteArray());
  }

  private static CommitTracker.Entry entry(ConsumerRecord<byte[], ByteBuffer> r) {
    return new CommitTracker.Entry(r.offset(), r.timestamp(), r.serializedKeySize() + r.serializedValueSize());
  }

  private static CommitTracker.Entry submit(ReaderPipeline p, ConsumerRecord<byte[], ByteBuffer> r) throws Exception {
    CommitTracker.Entry e = entry(r);
    assertThat(p.submit(r, e, 10_000)).as("submitted").isTrue();
    return e;
  }

  private double clientErrors(String reason) {
    var c = registry.find("weir.ingest.storage.reader.client.errors").tag("reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  /** Submits on another thread (a fetch thread) and returns once that thread waits for room. */
  private Future<Boolean> submitElsewhere(ReaderPipeline p, ConsumerRecord<byte[], ByteBuffer> r, CommitTracker.Entry e) {
    AtomicReference<Thread> fetchThread = new AtomicReference<>();
    Future<Boolean> f = executor.submit(() -> {
      fetchThread.set(Thread.currentThread());
      return p.submit(r, e, TimeUnit.MINUTES.toMillis(5));
    });
    await().until(() -> fetchThread.get() != null && fetchThread.get().getState() == Thread.State.TIMED_WAITING);
    return f;
  }

  /** Blocks the calling push until the test releases it. */
  private void awaitRelease() throws InterruptedException {
    assertThat(release.await(30, TimeUnit.SECONDS)).as("released by the test").isTrue();
  }

  @Test
  void shardsAppendEachSeriesInOffsetOrderAndFinishEveryRecord() throws Exception {
    ReaderPipeline p = pipeline(3, 1 << 20, null);
    List<CommitTracker.Entry> entries = new ArrayList<>();
    for (int offset = 0; offset < 300; offset++) {
      entries.add(submit(p, record(offset, 20)));
    }
    await().until(() -> entries.stream().allMatch(CommitTracker.Entry::isDone));

    List<Long> expected = new ArrayList<>();
    for (long t = 0; t < 300; t++) {
      expected.add(t);
    }
    assertThat(pusher.samplesBySeries()).hasSize(20)
        .allSatisfy((series, samples) -> assertThat(samples).as(series).containsExactlyElementsOf(expected));
    assertThat(pusher.calls.stream().map(Call::thread).distinct().count()).as("appended by more than one shard")
        .isGreaterThan(1);
    await().until(() -> p.inFlight() == 0 && p.bufferedBytes() == 0);
    assertThat(metrics.recordsOk.count()).isEqualTo(300);
    assertThat(p.failure()).isNull();
  }

  @Test
  void aRecordsMetadataIsAppendedOnceWhetherItsSeriesGoToOneShardOrSeveral() throws Exception {
    for (int shards : new int[] {1, 3}) {
      pusher.calls.clear();
      ReaderPipeline p = pipeline(shards, 1 << 20, null);
      WriteRequest req = request(7, 20).toBuilder()
          .addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("m").setHelp("a help text"))
          .build();
      CommitTracker.Entry e = submit(p, record(7, "tenant", req.toByteArray()));
      await().until(e::isDone);
      assertThat(pusher.calls.stream().mapToInt(Call::metadata).sum()).as("%d shards", shards).isEqualTo(1);
      assertThat(pusher.samplesBySeries()).as("%d shards", shards).hasSize(20)
          .allSatisfy((series, samples) -> assertThat(samples).containsExactly(7L));
      if (shards > 1) {
        assertThat(pusher.calls).as("series split across shards").hasSizeGreaterThan(1);
      }
    }
  }

  @Test
  void serverErrorIsRetriedAndTheRecordIsNotDoneUntilThePushSucceeds() throws Exception {
    AtomicBoolean failing = new AtomicBoolean(true);
    pusher.behaviour = (t, r) -> {
      if (failing.get()) {
        throw new ServerErrorException("disk full");
      }
    };
    ReaderPipeline p = pipeline(2, 1 << 20, null);
    CommitTracker.Entry e = submit(p, record(0, 1));
    await().until(() -> metrics.retries.count() >= 2);
    assertThat(e.isDone()).as("held while the server error lasts").isFalse();
    assertThat(p.inFlight()).isEqualTo(1);
    assertThat(pusher.calls).isEmpty();

    failing.set(false);
    await().until(e::isDone);
    assertThat(pusher.calls).hasSize(1);
    assertThat(p.failure()).isNull();
    await().until(() -> p.inFlight() == 0);
  }

  @Test
  void clientErrorIsCountedByReasonAndTheRecordIsDone() throws Exception {
    pusher.behaviour = (t, r) -> {
      throw new ClientErrorException("sample_out_of_order", "too old");
    };
    ReaderPipeline p = pipeline(2, 1 << 20, null);
    CommitTracker.Entry e = submit(p, record(0, 1));
    await().until(e::isDone);
    assertThat(clientErrors("sample_out_of_order")).isEqualTo(1);
    assertThat(metrics.retries.count()).isZero();
    assertThat(pusher.attempts).as("not retried").hasValue(1);
    assertThat(metrics.recordsOk.count()).as("the valid part counts as appended").isEqualTo(1);
    assertThat(p.failure()).isNull();
  }

  @Test
  void undecodableRecordsAndInvalidTenantsAreClientErrorsSentToTheDeadLetterAndDone() throws Exception {
    List<String> deadLetters = new CopyOnWriteArrayList<>();
    ReaderPipeline p = pipeline(2, 1 << 20, (r, error) -> deadLetters.add(r.offset() + ": " + error));
    CommitTracker.Entry garbage = submit(p, record(0, "tenant", new byte[] {(byte) 0xff, 1, 2}));
    CommitTracker.Entry badTenant = submit(p, record(1, "../x", request(1, 1).toByteArray()));
    CommitTracker.Entry good = submit(p, record(2, 1));
    await().until(() -> garbage.isDone() && badTenant.isDone() && good.isDone());

    assertThat(clientErrors("undecodable_record")).isEqualTo(1);
    assertThat(clientErrors("invalid_tenant")).isEqualTo(1);
    assertThat(metrics.recordsClientError.count()).isEqualTo(2);
    assertThat(metrics.recordsOk.count()).isEqualTo(1);
    assertThat(deadLetters).hasSize(2);
    assertThat(deadLetters.get(0)).startsWith("0: ");
    assertThat(deadLetters.get(1)).startsWith("1: ").contains("tenant");
    assertThat(pusher.calls).extracting(Call::tenant).containsExactly("tenant");
    await().until(() -> p.inFlight() == 0 && p.bufferedBytes() == 0);
  }

  @Test
  void deadLetterServerErrorsAreRetriedBeforeTheRecordIsDone() throws Exception {
    AtomicInteger sends = new AtomicInteger();
    ReaderPipeline p = pipeline(1, 1 << 20, (r, error) -> {
      if (sends.incrementAndGet() == 1) {
        throw new ServerErrorException("dead-letter topic unavailable");
      }
    });
    CommitTracker.Entry e = submit(p, record(0, "tenant", new byte[] {(byte) 0xff, 1, 2}));
    await().until(e::isDone);
    assertThat(sends).hasValue(2);
    assertThat(metrics.retries.count()).isEqualTo(1);
  }

  @Test
  void runtimeExceptionFailsThePipelineAndReleasesAFetchThreadWaitingForRoom() throws Exception {
    pusher.behaviour = (t, r) -> {
      awaitRelease();
      throw new IllegalStateException("bug in the appender");
    };
    ReaderPipeline p = pipeline(1, 1, null);
    submit(p, record(0, 1));
    ConsumerRecord<byte[], ByteBuffer> second = record(1, 1);
    Future<Boolean> blocked = submitElsewhere(p, second, new CommitTracker.Entry(1, 0, 10));

    release.countDown();
    assertThat(blocked.get(30, TimeUnit.SECONDS)).as("submit gives up instead of waiting for room").isFalse();
    assertThat(p.failure()).isInstanceOf(IllegalStateException.class).hasMessage("bug in the appender");
    assertThat(p.submit(second, entry(second), 0)).as("a failed pipeline takes nothing").isFalse();
  }

  @Test
  void stackOverflowErrorFromThePusherFailsThePipeline() throws Exception {
    pusher.behaviour = (t, r) -> {
      throw new StackOverflowError();
    };
    ReaderPipeline p = pipeline(2, 1 << 20, null);
    submit(p, record(0, 1));
    await().until(() -> p.failure() != null);
    assertThat(p.failure()).isInstanceOf(StackOverflowError.class);
  }

  @Test
  void assertionErrorFromThePusherFailsThePipeline() throws Exception {
    pusher.behaviour = (t, r) -> {
      throw new AssertionError("invariant broken");
    };
    ReaderPipeline p = pipeline(2, 1 << 20, null);
    submit(p, record(0, 1));
    await().until(() -> p.failure() != null);
    assertThat(p.failure()).isInstanceOf(AssertionError.class).hasMessage("invariant broken");
  }

  @Test
  void closeNeverInterruptsAThreadInsidePush() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    pusher.behaviour = (t, r) -> {
      entered.countDown();
      while (true) {
        try {
          if (release.await(10, TimeUnit.MILLISECONDS)) {
            break;
          }
        } catch (InterruptedException e) {
          interrupted.set(true);
        }
      }
      if (Thread.currentThread().isInterrupted()) {
        interrupted.set(true);
      }
    };
    ReaderPipeline p = pipeline(1, 1 << 20, null);
    CommitTracker.Entry e = submit(p, record(0, 1));
    assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();

    Thread closer = new Thread(p::close, "closer");
    closer.start();
    // close() is past setting its flag and waits for the shard that is inside push.
    await().until(() -> closer.getState() == Thread.State.TIMED_WAITING);
    release.countDown();
    closer.join(30_000);

    assertThat(closer.isAlive()).isFalse();
    assertThat(interrupted).as("a WAL writer must never be interrupted").isFalse();
    assertThat(e.isDone()).as("the append in hand is finished").isTrue();
  }

  @Test
  void sequentialModePushesOnTheCallingThreadAndThrowsFailuresToIt() throws Exception {
    ReaderPipeline p = pipeline(0, 1 << 20, null);
    CommitTracker.Entry ok = submit(p, record(0, 2));
    assertThat(ok.isDone()).as("done when submit returns").isTrue();
    assertThat(pusher.calls).extracting(Call::thread).containsExactly(Thread.currentThread().getName());

    pusher.behaviour = (t, r) -> {
      throw new IllegalStateException("bug in the appender");
    };
    ConsumerRecord<byte[], ByteBuffer> r = record(1, 1);
    CommitTracker.Entry failed = entry(r);
    assertThatThrownBy(() -> p.submit(r, failed, 1_000)).isInstanceOf(IllegalStateException.class)
        .hasMessage("bug in the appender");
    assertThat(failed.isDone()).isFalse();
  }

  @Test
  void sequentialModeSkipsUndecodableRecords() throws Exception {
    ReaderPipeline p = pipeline(0, 1 << 20, null);
    CommitTracker.Entry e = submit(p, record(0, "tenant", new byte[] {(byte) 0xff, 1, 2}));
    assertThat(e.isDone()).isTrue();
    assertThat(clientErrors("undecodable_record")).isEqualTo(1);
    assertThat(pusher.calls).isEmpty();
    assertThat(p.inFlight()).isZero();
  }

  @Test
  void limitBufferedBytesLowersAndRaisesTheBound() throws Exception {
    pusher.behaviour = (t, r) -> awaitRelease();
    ReaderPipeline p = pipeline(1, 5_000, null);
    List<CommitTracker.Entry> entries = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      CommitTracker.Entry e = new CommitTracker.Entry(i, 0, 1_000);
      assertThat(p.submit(record(i, 1), e, 0)).isTrue();
      entries.add(e);
    }
    assertThat(p.bufferedBytes()).isEqualTo(5_000);
    assertThat(p.submit(record(5, 1), new CommitTracker.Entry(5, 0, 1_000), 0)).as("full").isFalse();

    p.limitBufferedBytes(8_000);
    for (int i = 5; i < 8; i++) {
      CommitTracker.Entry e = new CommitTracker.Entry(i, 0, 1_000);
      assertThat(p.submit(record(i, 1), e, 0)).as("raised bound").isTrue();
      entries.add(e);
    }
    p.limitBufferedBytes(2_000);
    assertThat(p.submit(record(8, 1), new CommitTracker.Entry(8, 0, 1_000), 0)).as("lowered bound").isFalse();
    assertThat(p.bufferedBytes()).as("records already in stay").isEqualTo(8_000);

    release.countDown();
    await().until(() -> entries.stream().allMatch(CommitTracker.Entry::isDone));
    await().until(() -> p.bufferedBytes() == 0);
    assertThat(p.submit(record(8, 1), new CommitTracker.Entry(8, 0, 1_000), 0)).isTrue();
  }

  @Test
  void raisingTheBoundWakesAFetchThreadWaitingForRoom() throws Exception {
    pusher.behaviour = (t, r) -> awaitRelease();
    ReaderPipeline p = pipeline(1, 1_000, null);
    assertThat(p.submit(record(0, 1), new CommitTracker.Entry(0, 0, 1_000), 0)).isTrue();
    Future<Boolean> waiting = submitElsewhere(p, record(1, 1), new CommitTracker.Entry(1, 0, 1_000));
    p.limitBufferedBytes(2_000);
    assertThat(waiting.get(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aRecordLargerThanTheBoundIsTakenWhenThePipelineIsEmpty() throws Exception {
    ReaderPipeline p = pipeline(1, 100, null);
    CommitTracker.Entry big = new CommitTracker.Entry(0, 0, 10_000);
    assertThat(p.submit(record(0, 1), big, 0)).as("else it could never go through").isTrue();
    await().until(big::isDone);
  }
}
