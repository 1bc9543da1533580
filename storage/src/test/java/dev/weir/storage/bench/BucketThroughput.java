package dev.weir.storage.bench;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.bucket.S3Bucket;
import dev.weir.storage.bucket.S3BucketConfig;
import dev.weir.storage.bucket.S3BucketMetrics;
import dev.weir.storage.testing.S3Server;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Upload and read-back throughput of the two buckets on the same block: the S3 bucket against a
 * local S3Proxy (its own JVM, filesystem-backed, loopback, http) and the filesystem bucket (every
 * file fsynced). The block is {@code MB} megabytes of random chunk files of up to 96 MiB (so the S3
 * upload goes in 16 MiB parts above the 64 MiB threshold) plus a 4 MiB index; reads fetch each
 * file in 1 MiB range reads, as a store-gateway would. Each bucket gets {@code ROUNDS} uploads of
 * fresh block IDs; the best and the median round are printed. Not a test: results go to
 * docs/benchmarks.md. Usage: {@code BucketThroughput [MB] [ROUNDS]}.
 */
public final class BucketThroughput {
  private static final int MIB = 1 << 20;

  private BucketThroughput() {}

  public static void main(String[] args) throws Exception {
    int mb = args.length > 0 ? Integer.parseInt(args[0]) : 256;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Path work = Files.createTempDirectory("weir-bucket-bench");
    try {
      Path block = writeBlock(work.resolve("local").resolve(Ulid.random(0)), mb);
      long bytes;
      try (var s = Files.walk(block)) {
        bytes = s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
      }
      System.out.printf("block: %.1f MiB in %s%n", bytes / (double) MIB, block);
      try (S3Server server = S3Server.start(work.resolve("s3proxy"))) {
        server.createBucket("bench");
        S3BucketConfig config = S3BucketConfig.of(server.endpoint(), "bench", S3Server.ACCESS_KEY,
            S3Server.SECRET_KEY, "", true, S3BucketConfig.LookupType.PATH, 3);
        try (S3Bucket s3 = S3Bucket.open(config, new S3BucketMetrics(new SimpleMeterRegistry()))) {
          run("s3 (S3Proxy, loopback)", s3, block, bytes, rounds);
        }
      }
      run("filesystem (fsync)", new FilesystemBucket(work.resolve("fs")), block, bytes, rounds);
    } finally {
      BlockWriter.deleteRecursively(work);
    }
  }

  static Path writeBlock(Path dir, int mb) throws Exception {
    Files.createDirectories(dir.resolve("chunks"));
    Random r = new Random(1);
    byte[] buf = new byte[MIB];
    int left = mb - 4;
    for (int i = 1; left > 0; i++) {
      int size = Math.min(96, left);
      try (var out = Files.newOutputStream(dir.resolve(String.format("chunks/%06d", i)))) {
        for (int m = 0; m < size; m++) {
          r.nextBytes(buf);
          out.write(buf);
        }
      }
      left -= size;
    }
    byte[] index = new byte[4 * MIB];
    r.nextBytes(index);
    Files.write(dir.resolve("index"), index);
    Files.writeString(dir.resolve("meta.json"), "{\"ulid\": \"" + dir.getFileName() + "\", \"version\": 1}");
    return dir;
  }

  static void run(String name, Bucket bucket, Path block, long bytes, int rounds) throws Exception {
    List<Double> up = new ArrayList<>();
    List<Double> down = new ArrayList<>();
    for (int i = 0; i < rounds; i++) {
      String id = Ulid.random(1_700_000_000_000L + i);
      long t0 = System.nanoTime();
      bucket.upload("bench", id, block);
      long t1 = System.nanoTime();
      long read = readAll(bucket, id, block);
      long t2 = System.nanoTime();
      if (read != bytes - Files.size(block.resolve("meta.json"))) {
        throw new IllegalStateException("read " + read + " bytes");
      }
      up.add(bytes / (double) MIB / ((t1 - t0) / 1e9));
      down.add(read / (double) MIB / ((t2 - t1) / 1e9));
      bucket.delete("bench", id);
    }
    System.out.printf("%-24s upload MiB/s best %6.1f median %6.1f | range reads (1 MiB) MiB/s best %6.1f median %6.1f%n",
        name, max(up), median(up), max(down), median(down));
  }

  static long readAll(Bucket bucket, String id, Path block) throws Exception {
    long total = 0;
    List<String> files = new ArrayList<>(List.of("index"));
    try (var s = Files.list(block.resolve("chunks"))) {
      s.sorted().forEach(p -> files.add("chunks/" + p.getFileName()));
    }
    for (String f : files) {
      long size = bucket.size("bench", id, f);
      for (long off = 0; off < size; off += MIB) {
        total += bucket.read("bench", id, f, off, MIB).length;
      }
    }
    return total;
  }

  static double max(List<Double> v) {
    return v.stream().mapToDouble(Double::doubleValue).max().orElse(0);
  }

  static double median(List<Double> v) {
    return v.stream().sorted().toList().get(v.size() / 2);
  }
}
