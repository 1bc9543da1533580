package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.BlockWriter;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code weir tool blocks ls}: one JSON line per block of the bucket, from its meta.json: tenant,
 * ID, time range ({@code max_time} exclusive), series, samples and chunks.
 */
final class BlocksLsCommand extends ToolCommand {
  private final BucketBlocks blocks = new BucketBlocks(flags);

  @Override
  String name() {
    return "blocks ls";
  }

  @Override
  String summary() {
    return "List the blocks of a bucket per tenant: time range, series, samples.";
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (!args.isEmpty()) {
      throw ToolException.usage("unexpected argument " + args.get(0));
    }
    Bucket bucket = blocks.open();
    Path scratch = Files.createTempDirectory("weir-tool-blocks");
    try {
      for (Bucket.BlockRef b : blocks.list(bucket)) {
        BlockMeta m = BucketBlocks.meta(bucket, b, scratch);
        JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"tenant\":").string(b.tenant());
        w.raw(",\"id\":").string(b.id()).raw(",\"min_time\":").number(m.minTime());
        w.raw(",\"max_time\":").number(m.maxTime()).raw(",\"series\":").number(m.numSeries());
        w.raw(",\"samples\":").number(m.numSamples()).raw(",\"chunks\":").number(m.numChunks());
        out.println(w.raw('}'));
      }
    } finally {
      BlockWriter.deleteRecursively(scratch);
    }
    return 0;
  }
}
