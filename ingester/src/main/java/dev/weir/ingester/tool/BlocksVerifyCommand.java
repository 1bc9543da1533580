package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.chunk.ChunkIterator;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code weir tool blocks verify}: reads every block of the bucket whole — meta.json, the index
 * (its checksums), every chunk (its checksum, and decoded sample by sample) — and checks that the
 * samples lie in their chunk's and the block's time range, in order, and that the series, chunk and
 * sample counts match meta.json. One JSON line per block ({@code ok}, or its {@code problems});
 * exit code 1 when any block is damaged, with one line per damaged block on stderr.
 */
final class BlocksVerifyCommand extends ToolCommand {
  private final BucketBlocks blocks = new BucketBlocks(flags);

  @Override
  String name() {
    return "blocks verify";
  }

  @Override
  String summary() {
    return "Read the index and every chunk of each block of a bucket and report damage.";
  }

  /** What a block holds, as read. */
  private static final class Counts {
    long series;
    long chunks;
    long samples;
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (!args.isEmpty()) {
      throw ToolException.usage("unexpected argument " + args.get(0));
    }
    Bucket bucket = blocks.open();
    Path scratch = Files.createTempDirectory("weir-tool-verify");
    int damaged = 0;
    try {
      for (Bucket.BlockRef b : blocks.list(bucket)) {
        Path dir = BucketBlocks.download(bucket, b, scratch);
        List<String> problems = new ArrayList<>();
        Counts c = verify(dir, problems);
        BlockWriter.deleteRecursively(dir);
        out.println(line(b, c, problems));
        if (!problems.isEmpty()) {
          damaged++;
          out.flush();
          err.println("weir tool blocks verify: block " + b.tenant() + "/" + b.id() + " is damaged: "
              + String.join("; ", problems));
        }
      }
    } finally {
      BlockWriter.deleteRecursively(scratch);
    }
    return damaged == 0 ? 0 : ToolException.FAILURE;
  }

  private static Counts verify(Path dir, List<String> problems) {
    Counts c = new Counts();
    Block block;
    List<SeriesChunks> series;
    try {
      block = Block.open(dir);
    } catch (Exception e) {
      problems.add("cannot open: " + ToolMain.oneLine(e));
      return c;
    }
    try {
      series = block.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of());
    } catch (RuntimeException e) {
      problems.add("cannot read the chunks: " + ToolMain.oneLine(e));
      return c;
    }
    BlockMeta meta = block.meta();
    for (SeriesChunks s : series) {
      c.series++;
      for (ChunkData chunk : s.chunks()) {
        c.chunks++;
        String p = checkChunk(chunk, meta, c);
        if (p != null) {
          problems.add("series " + s.labels() + " chunk [" + chunk.minTime() + ", " + chunk.maxTime() + "]: " + p);
        }
      }
    }
    compare("series", meta.numSeries(), c.series, problems);
    compare("chunks", meta.numChunks(), c.chunks, problems);
    compare("samples", meta.numSamples(), c.samples, problems);
    return c;
  }

  /** Decodes a chunk, adding its samples to the counts; returns what is wrong, or null. */
  private static @org.jspecify.annotations.Nullable String checkChunk(ChunkData chunk, BlockMeta meta, Counts c) {
    try {
      ChunkIterator it = Chunks.iterator(chunk.encoding(), chunk.bytes());
      long prev = Long.MIN_VALUE;
      int n = 0;
      while (it.next()) {
        long t = it.timestamp();
        if (t <= prev || t < chunk.minTime() || t > chunk.maxTime()) {
          return "sample at " + t + " out of order or outside the chunk's range";
        }
        if (t < meta.minTime() || t >= meta.maxTime()) {
          return "sample at " + t + " outside the block's range";
        }
        prev = t;
        n++;
      }
      c.samples += n;
      return null;
    } catch (RuntimeException e) {
      return "does not decode: " + ToolMain.oneLine(e);
    }
  }

  private static void compare(String what, long inMeta, long read, List<String> problems) {
    if (inMeta != read) {
      problems.add("meta.json says " + inMeta + " " + what + ", the block holds " + read);
    }
  }

  private static String line(Bucket.BlockRef b, Counts c, List<String> problems) {
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"tenant\":").string(b.tenant());
    w.raw(",\"id\":").string(b.id()).raw(",\"ok\":").raw(String.valueOf(problems.isEmpty()));
    w.raw(",\"series\":").number(c.series).raw(",\"chunks\":").number(c.chunks).raw(",\"samples\":").number(c.samples);
    if (!problems.isEmpty()) {
      w.raw(",\"problems\":[");
      for (int i = 0; i < problems.size(); i++) {
        w.raw(i == 0 ? "" : ",").string(problems.get(i));
      }
      w.raw(']');
    }
    return w.raw('}').toString();
  }
}
