package dev.weir.storage.bucketstore;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Queries over blocks in a filesystem bucket: matchers, time pruning, merging, limits. */
class BucketStoreQueryTest {
  static final long STEP = 15_000;
  @TempDir Path dir;
  CountingBucket bucket;
  SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @BeforeEach
  void setUp() throws IOException {
    bucket = new CountingBucket(new FilesystemBucket(dir.resolve("bucket")));
  }

  BucketStore store(long maxChunkBytes) throws IOException {
    BucketStore s = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync"), maxChunkBytes),
        bucket, new BucketStoreMetrics(registry), () -> 0);
    s.sync();
    return s;
  }

  /** Series s: metric_{s%5}, host-s, zone z{s%3}, and canary=yes on every tenth. */
  static Labels labels(int s) {
    return s % 10 == 0
        ? Labels.of("__name__", "metric_" + (s % 5), "canary", "yes", "instance", "host-" + s, "zone", "z" + (s % 3))
        : Labels.of("__name__", "metric_" + (s % 5), "instance", "host-" + s, "zone", "z" + (s % 3));
  }

  static double value(int s, long ts) {
    return s * 1000 + ts / (double) STEP;
  }

  /** 60 series, a sample every 15 s in [from, to). */
  String upload(long from, long to, int entropy) throws IOException {
    TestBlocks.Builder b = new TestBlocks.Builder();
    for (int s = 0; s < 60; s++) {
      int series = s;
      b.addRange(labels(s), from, to, STEP, ts -> value(series, ts));
    }
    return b.upload(bucket, dir.resolve("scratch"), "t", from, to, entropy);
  }

  static List<Labels> expectedLabels(List<Matcher> matchers) {
    List<Labels> out = new ArrayList<>();
    for (int s = 0; s < 60; s++) {
      Labels l = labels(s);
      if (matchers.stream().allMatch(m -> m.matches(l))) {
        out.add(l);
      }
    }
    out.sort(null);
    return out;
  }

  @Test
  void selectsByEveryMatcherTypeWithPrometheusSemantics() throws IOException {
    upload(0, 2 * HOUR, 1);
    BucketStore store = store(0);
    List<List<Matcher>> cases = List.of(
        List.of(Matcher.eq("zone", "z1")),
        List.of(Matcher.neq("zone", "z1")),
        List.of(Matcher.re("__name__", "metric_[12]"), Matcher.eq("zone", "z0")),
        List.of(Matcher.nre("instance", "host-[1-4].*")),
        List.of(Matcher.eq("canary", "")),
        List.of(Matcher.neq("canary", ""), Matcher.nre("zone", "z2")),
        List.of(Matcher.re("canary", "yes|"), Matcher.eq("__name__", "metric_0")),
        List.of(Matcher.eq("zone", "nowhere")),
        List.of());
    for (List<Matcher> matchers : cases) {
      assertThat(store.select("t", 0, 2 * HOUR, matchers)).as("%s", matchers).extracting(SeriesChunks::labels)
          .containsExactlyElementsOf(expectedLabels(matchers));
    }
    assertThat(expectedLabels(List.of(Matcher.eq("canary", "")))).hasSize(54);
    assertThat(expectedLabels(cases.get(5))).hasSize(4);
  }

  @Test
  void returnsExactSamplesOfTheQueryRange() throws IOException {
    upload(0, 2 * HOUR, 1);
    BucketStore store = store(0);
    List<SeriesChunks> got = store.select("t", 10 * STEP, 400 * STEP, List.of(Matcher.eq("instance", "host-7")));
    assertThat(got).hasSize(1);
    SeriesChunks.Samples samples = got.get(0).samples(10 * STEP, 400 * STEP);
    assertThat(samples.timestamps()).containsExactly(LongStream.rangeClosed(10, 400).map(i -> i * STEP).toArray());
    assertThat(samples.values()).containsExactly(LongStream.rangeClosed(10, 400).mapToDouble(i -> value(7, i * STEP))
        .toArray());
    assertThat(store.select("other-tenant", 0, 2 * HOUR, List.of())).isEmpty();
  }

  @Test
  void skipsBlocksWhoseTimeRangeMissesTheQuery() throws IOException {
    String first = upload(0, 2 * HOUR, 1);
    String second = upload(2 * HOUR, 4 * HOUR, 2);
    BucketStore store = store(0);
    bucket.reset();
    List<SeriesChunks> got = store.select("t", 2 * HOUR, 3 * HOUR, List.of(Matcher.eq("instance", "host-3")));
    assertThat(got.get(0).samples(2 * HOUR, 3 * HOUR).timestamps()).hasSize(241).startsWith(2 * HOUR);
    assertThat(bucket.reads).isNotEmpty().allMatch(r -> r.id().equals(second));
    bucket.reset();
    // maxTime is exclusive: a query ending just before the second block reads only the first.
    store.select("t", HOUR, 2 * HOUR - 1, List.of(Matcher.eq("instance", "host-3")));
    assertThat(bucket.reads).isNotEmpty().allMatch(r -> r.id().equals(first));
    bucket.reset();
    assertThat(store.select("t", 5 * HOUR, 6 * HOUR, List.of())).isEmpty();
    assertThat(store.labelNames("t", 5 * HOUR, 6 * HOUR, List.of())).isEmpty();
    assertThat(bucket.reads).isEmpty();
  }

  @Test
  void mergesASeriesFoundInSeveralBlocksAndDropsIdenticalSamples() throws IOException {
    Labels shared = Labels.of("__name__", "up", "job", "a");
    new TestBlocks.Builder().addRange(shared, 0, 100_000, 10_000, ts -> ts / 1000.0)
        .add(Labels.of("__name__", "up", "job", "only-first"), 5_000, 1)
        .upload(bucket, dir.resolve("scratch"), "t", 0, 2 * HOUR, 1);
    // Overlaps the first block in time: 50..90 s are identical samples, 100..150 s are new.
    new TestBlocks.Builder().addRange(shared, 50_000, 160_000, 10_000, ts -> ts / 1000.0)
        .add(Labels.of("__name__", "up", "job", "b-second"), 7_000, 2)
        .upload(bucket, dir.resolve("scratch"), "t", 0, 2 * HOUR, 2);
    BucketStore store = store(0);
    List<SeriesChunks> got = store.select("t", 0, 2 * HOUR, List.of(Matcher.eq("__name__", "up")));
    assertThat(got).extracting(s -> s.labels().get("job")).containsExactly("a", "b-second", "only-first");
    SeriesChunks.Samples a = got.get(0).samples(0, 2 * HOUR);
    assertThat(a.timestamps()).containsExactly(LongStream.rangeClosed(0, 15).map(i -> i * 10_000).toArray());
    assertThat(a.values()).containsExactly(LongStream.rangeClosed(0, 15).mapToDouble(i -> i * 10.0).toArray());
    assertThat(store.labelValues("t", "job", 0, 2 * HOUR, List.of())).containsExactly("a", "b-second", "only-first");
    assertThat(store.labelValues("t", "job", 0, 2 * HOUR, List.of(Matcher.re("job", "[ab].*"))))
        .containsExactly("a", "b-second");
  }

  @Test
  void answersLabelNamesAndValuesWithoutMatchersFromTheIndexHeaderAlone() throws IOException {
    upload(0, 2 * HOUR, 1);
    BucketStore store = store(0);
    bucket.reset();
    assertThat(store.labelNames("t", 0, HOUR, List.of())).containsExactly("__name__", "canary", "instance", "zone");
    assertThat(store.labelValues("t", "zone", 0, HOUR, List.of())).containsExactly("z0", "z1", "z2");
    assertThat(bucket.reads).isEmpty();
    assertThat(store.labelNames("t", 0, HOUR, List.of(Matcher.eq("instance", "host-7")))).containsExactly("__name__",
        "instance", "zone");
    assertThat(store.labelNames("t", 0, HOUR, List.of(Matcher.re("instance", "host-(7|10)")))).containsExactly(
        "__name__", "canary", "instance", "zone");
    assertThat(store.labelValues("t", "instance", 0, HOUR, List.of(Matcher.eq("canary", "yes"))))
        .containsExactly("host-0", "host-10", "host-20", "host-30", "host-40", "host-50");
  }

  @Test
  void refusesAQueryOverTheChunkBytesLimitBeforeReadingPastIt() throws IOException {
    upload(0, 2 * HOUR, 1);
    BucketStore store = store(4096);
    assertThat(store.select("t", 0, 2 * HOUR, List.of(Matcher.eq("instance", "host-1")))).hasSize(1);
    bucket.reset();
    assertThatThrownBy(() -> store.select("t", 0, 2 * HOUR, List.of()))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> {
          assertThat(e.reason()).isEqualTo("max_chunk_bytes_per_query");
          assertThat(e.httpStatus()).isEqualTo(429);
          assertThat(e.getMessage()).contains("blocks-storage.bucket-store.max-chunk-bytes-per-query");
        });
    assertThat(bucket.chunkBytesRead()).isLessThanOrEqualTo(4096);
    assertThat(registry.get("weir.bucket.store.queries.refused").tag("reason", "max_chunk_bytes_per_query")
        .counter().count()).isEqualTo(1);
  }
}
