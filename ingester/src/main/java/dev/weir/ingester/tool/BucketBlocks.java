package dev.weir.ingester.tool;

import dev.weir.ingester.config.BucketConfig;
import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.BlockMeta;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The bucket flags of the {@code blocks} subcommands (the main binary's {@code blocks-storage.*}
 * through {@link BucketConfig.Flags}, plus a tenant filter) and read-only access to its blocks:
 * a block is read through the {@link Bucket} interface into a local scratch directory, so any
 * backend works. Not thread-safe.
 */
final class BucketBlocks {
  /** Range reads of this size when copying a block's files. */
  private static final int PIECE_BYTES = 8 << 20;
  private final BucketConfig.Flags bucketFlags;
  private final Flag<String> tenant;

  BucketBlocks(FlagSet fs) {
    bucketFlags = new BucketConfig.Flags(fs);
    tenant = fs.string("tenant", "", "Only this tenant's blocks; empty for every tenant.");
  }

  /** Opens the bucket; a missing filesystem bucket is a failure (it is not created). */
  Bucket open() throws ToolException, IOException {
    BucketConfig config;
    try {
      config = bucketFlags.build();
    } catch (ConfigException e) {
      throw ToolException.usage(e.getMessage());
    }
    if (config.backend().equals("filesystem") && !Files.isDirectory(config.filesystemDir())) {
      throw ToolException.failure("bucket directory " + config.filesystemDir() + " does not exist"
          + " (--blocks-storage.filesystem.dir)");
    }
    return config.open(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
  }

  /** The bucket's complete blocks, of the chosen tenant if any. */
  List<Bucket.BlockRef> list(Bucket bucket) throws IOException {
    List<Bucket.BlockRef> out = new ArrayList<>();
    for (Bucket.BlockRef b : bucket.list()) {
      if (tenant.get().isEmpty() || tenant.get().equals(b.tenant())) {
        out.add(b);
      }
    }
    return out;
  }

  /** Reads a block's meta.json (through a scratch copy, as {@link BlockMeta} reads files). */
  static BlockMeta meta(Bucket bucket, Bucket.BlockRef b, Path scratch) throws IOException {
    Path dir = Files.createDirectories(scratch.resolve(b.tenant()).resolve(b.id()));
    Files.write(dir.resolve(BlockMeta.FILE), bucket.meta(b.tenant(), b.id()));
    return BlockMeta.read(dir);
  }

  /**
   * Copies a block into {@code scratch/<tenant>/<id>}: meta.json, index and the chunk files
   * {@code chunks/000001}, ... up to the first missing one. A missing index is left missing, for
   * the verification to report.
   */
  static Path download(Bucket bucket, Bucket.BlockRef b, Path scratch) throws IOException {
    Path dir = Files.createDirectories(scratch.resolve(b.tenant()).resolve(b.id()));
    Files.write(dir.resolve(BlockMeta.FILE), bucket.meta(b.tenant(), b.id()));
    copy(bucket, b, "index", dir);
    Files.createDirectories(dir.resolve("chunks"));
    for (int i = 1; copy(bucket, b, String.format("chunks/%06d", i), dir); i++) {
      // next chunk file
    }
    return dir;
  }

  /** Copies one file of a block; false when the bucket does not have it. */
  private static boolean copy(Bucket bucket, Bucket.BlockRef b, String file, Path dir) throws IOException {
    long size;
    try {
      size = bucket.size(b.tenant(), b.id(), file);
    } catch (NoSuchFileException e) {
      return false;
    }
    try (OutputStream out = Files.newOutputStream(dir.resolve(file))) {
      for (long off = 0; off < size; off += PIECE_BYTES) {
        out.write(bucket.read(b.tenant(), b.id(), file, off, (int) Math.min(PIECE_BYTES, size - off)));
      }
    }
    return true;
  }
}
