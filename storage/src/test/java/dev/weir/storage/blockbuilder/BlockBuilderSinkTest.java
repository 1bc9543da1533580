package dev.weir.storage.blockbuilder;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.ingest.batch.BatchSink;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockBuilderSinkTest {
  static final long HOUR = 3_600_000L;
  @TempDir Path dir;

  static WriteRequest req(String name, long... tsAndValues) {
    TimeSeries.Builder ts = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("job").setValue("j"))
        .addLabels(Label.newBuilder().setName("__name__").setValue(name));
    for (int i = 0; i < tsAndValues.length; i += 2) {
      ts.addSamples(Sample.newBuilder().setTimestamp(tsAndValues[i]).setValue(tsAndValues[i + 1]));
    }
    return WriteRequest.newBuilder().addTimeseries(ts).build();
  }

  BlockBuilderSink sink(FilesystemBucket bucket) {
    return new BlockBuilderSink(bucket, dir.resolve("staging"), 2 * HOUR, "topic", new SimpleMeterRegistry());
  }

  /** Every sample in every block of the bucket, counted: series → "ts value" → times seen. */
  static Map<String, Map<String, Integer>> census(FilesystemBucket bucket) throws Exception {
    Map<String, Map<String, Integer>> out = new TreeMap<>();
    for (Bucket.BlockRef r : bucket.list()) {
      Block b = Block.open(bucket.root().resolve(r.tenant()).resolve(r.id()));
      for (SeriesChunks s : b.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+")))) {
        SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
        for (int i = 0; i < samples.size(); i++) {
          out.computeIfAbsent(r.tenant() + " " + Promtool.key(s.labels()), k -> new TreeMap<>())
              .merge(samples.timestamps()[i] + " " + samples.values()[i], 1, Integer::sum);
        }
      }
    }
    return out;
  }

  @Test
  void outOfOrderSamplesAreSortedTheFirstPerTimestampWinsAndRangesSplitBlocks() throws Exception {
    FilesystemBucket bucket = new FilesystemBucket(dir.resolve("bucket"));
    BatchSink.Batch b = sink(bucket).begin(3, 100, 5 * HOUR);
    // 300 samples across the 2h boundary at 4h, sent newest first, with a duplicate timestamp.
    for (int i = 299; i >= 0; i--) {
      b.add("t1", req("m", 3 * HOUR + i * 15_000L, i), 100 + (299 - i), 5 * HOUR);
    }
    b.add("t1", req("m", 3 * HOUR, 999), 400, 5 * HOUR); // same timestamp later: ignored
    b.add("t2", req("other", HOUR, 1), 401, 5 * HOUR);
    b.flush(402);
    b.close();

    List<Bucket.BlockRef> blocks = bucket.list();
    assertThat(blocks).hasSize(3); // t1 [2h,4h) and [4h,6h), t2 [0h,2h)
    for (Bucket.BlockRef r : blocks) {
      assertThat(BlockIds.partition(r.id())).isEqualTo(3);
      assertThat(BlockIds.startOffset(r.id())).isEqualTo(100);
      String meta = new String(bucket.meta(r.tenant(), r.id()));
      assertThat(meta).contains("\"startOffset\": 100", "\"endOffset\": 402", "\"partition\": 3,");
    }
    Map<String, List<String>> dump = Promtool.dump(bucket.root().resolve("t1"), dir.resolve("dump"));
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      expected.add(i + " " + (3 * HOUR + i * 15_000L));
    }
    assertThat(dump).containsOnlyKeys(Promtool.key(Labels.of("__name__", "m", "job", "j")));
    assertThat(dump.values().iterator().next()).isEqualTo(expected);
  }

  @Test
  void aRedoneCycleReplacesItsBlocksAndRemovesWhatAnUncommittedAttemptLeft() throws Exception {
    FilesystemBucket bucket = new FilesystemBucket(dir.resolve("bucket"));
    BlockBuilderSink before = sink(bucket);
    // A committed cycle [0, 10) of partition 0, and one of partition 1: they stay whatever happens.
    BatchSink.Batch earlier = before.begin(0, 0, HOUR - 1);
    earlier.add("a", req("m", HOUR - 5000, 7), 0, HOUR - 1);
    earlier.flush(10);
    BatchSink.Batch other = before.begin(1, 10, HOUR);
    other.add("a", req("n", HOUR, 9), 10, HOUR);
    other.flush(11);
    // Attempt 1 of the cycle at offset 10 (tenants a and b) uploads, then "crashes" before committing.
    BatchSink.Batch first = before.begin(0, 10, HOUR);
    first.add("a", req("m", HOUR, 1), 10, HOUR);
    first.add("b", req("m", HOUR, 2), 11, HOUR);
    first.add("a", req("m", HOUR + 1000, 3), 12, HOUR);
    first.flush(13);
    assertThat(bucket.list()).hasSize(4);
    // A half-finished upload of the crashed attempt lies around as well.
    String stale = BlockIds.of(HOUR, 0, 10, 99);
    Files.createDirectories(bucket.root().resolve("a").resolve(".upload-" + stale).resolve("chunks"));

    // After the restart the cycle is redone from offset 10 and (ended earlier this time) holds only a's
    // first record: the same ID for a replaces, b's leftover block and the stale upload go.
    BatchSink.Batch redo = sink(bucket).begin(0, 10, HOUR);
    redo.add("a", req("m", HOUR, 1), 10, HOUR);
    redo.flush(11);

    Map<String, Map<String, Integer>> census = census(bucket);
    assertThat(census).containsOnlyKeys("a {__name__=\"m\", job=\"j\"}", "a {__name__=\"n\", job=\"j\"}");
    assertThat(census.get("a {__name__=\"m\", job=\"j\"}")).containsExactly(
        Map.entry((HOUR - 5000) + " 7.0", 1), Map.entry(HOUR + " 1.0", 1));
    assertThat(bucket.listIncomplete()).isEmpty();
    assertThat(bucket.list()).hasSize(3);
  }

  @Test
  void blockIdsRoundTrip() {
    String id = BlockIds.of(1_796_000_000_000L, 65535, (1L << 48) - 1, 12345);
    assertThat(BlockIds.partition(id)).isEqualTo(65535);
    assertThat(BlockIds.startOffset(id)).isEqualTo((1L << 48) - 1);
    assertThat(BlockIds.of(1_796_000_000_000L, 2, 77, 1)).isEqualTo(BlockIds.of(1_796_000_000_000L, 2, 77, 1))
        .isNotEqualTo(BlockIds.of(1_796_000_000_000L, 2, 78, 1));
  }

  @Test
  void eachBlockCarriesTheMetadataOfItsFamiliesInASideFile() throws Exception {
    FilesystemBucket bucket = new FilesystemBucket(dir.resolve("bucket"));
    BatchSink.Batch b = sink(bucket).begin(0, 0, HOUR);
    dev.weir.proto.prompb.MetricMetadata reqMeta = dev.weir.proto.prompb.MetricMetadata.newBuilder()
        .setMetricFamilyName("req").setType(dev.weir.proto.prompb.MetricMetadata.MetricType.COUNTER).setHelp("h")
        .build();
    b.add("t1", req("req_total", HOUR, 1).toBuilder().addMetadata(reqMeta).addMetadata(reqMeta.toBuilder()
        .setMetricFamilyName("absent")).build(), 0, HOUR);
    b.add("t2", req("other", HOUR, 1), 1, HOUR);
    b.flush(2);
    b.close();
    for (Bucket.BlockRef r : bucket.list()) {
      java.util.SortedMap<String, dev.weir.proto.prompb.MetricMetadata> m =
          dev.weir.storage.tsdb.MetadataFile.read(bucket.root().resolve(r.tenant()).resolve(r.id()));
      if (r.tenant().equals("t1")) {
        assertThat(m).containsOnlyKeys("req").containsEntry("req", reqMeta);
      } else {
        assertThat(m).as("no metadata, no side file").isEmpty();
      }
    }
  }

  @Test
  void histogramSamplesGoIntoHistogramChunksOfTheirRangesBlocks() throws Exception {
    FilesystemBucket bucket = new FilesystemBucket(dir.resolve("bucket"));
    BatchSink.Batch b = sink(bucket).begin(0, 0, 5 * HOUR);
    List<dev.weir.storage.tsdb.chunk.NativeHistogram> sent = new ArrayList<>();
    // 200 samples a minute apart from 3h (across the 4h and 6h boundaries), newest first, floats interleaved.
    for (int i = 199; i >= 0; i--) {
      dev.weir.storage.tsdb.chunk.NativeHistogram h = new dev.weir.storage.tsdb.chunk.NativeHistogram(i % 2 == 0,
          0, 1, 0, 0, 2.0 * i, i, new int[] {0, 2}, new double[] {i, i}, new int[0], new double[0], new double[0]);
      sent.add(0, h);
      TimeSeries ts = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("h"))
          .addHistograms(dev.weir.storage.wire.HistogramProtos.toProto(h, 3 * HOUR + i * 60_000L))
          .addSamples(Sample.newBuilder().setTimestamp(3 * HOUR + i * 60_000L + 1).setValue(i)).build();
      b.add("t", WriteRequest.newBuilder().addTimeseries(ts).build(), 199 - i, 5 * HOUR);
    }
    b.flush(200);
    b.close();
    List<dev.weir.storage.tsdb.chunk.NativeHistogram> got = new ArrayList<>();
    int floats = 0;
    List<Bucket.BlockRef> blocks = bucket.list();
    assertThat(blocks).hasSize(3);
    blocks = new ArrayList<>(blocks);
    blocks.sort(java.util.Comparator.comparing(Bucket.BlockRef::id));
    for (Bucket.BlockRef r : blocks) {
      Block block = Block.open(bucket.root().resolve(r.tenant()).resolve(r.id()));
      for (SeriesChunks s : block.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "h")))) {
        assertThat(s.chunks()).anySatisfy(c -> assertThat(c.encoding()).isEqualTo(
            dev.weir.storage.tsdb.chunk.Chunks.HISTOGRAM));
        got.addAll(List.of(s.histograms(Long.MIN_VALUE, Long.MAX_VALUE).histograms()));
        floats += s.samples(Long.MIN_VALUE, Long.MAX_VALUE).size();
      }
      assertThat(block.meta().numSamples()).isPositive();
    }
    assertThat(floats).isEqualTo(200);
    assertThat(got).hasSize(200);
    for (int i = 0; i < 200; i++) {
      assertThat(dev.weir.storage.tsdb.chunk.HistogramValues.sameValue(got.get(i), sent.get(i))).as("sample %d", i)
          .isTrue();
    }
  }
}
