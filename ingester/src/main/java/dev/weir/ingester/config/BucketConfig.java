package dev.weir.ingester.config;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The long-term block storage every target shares (the block-builder and the ingesters' shipper
 * write to it, the store-gateway reads it), with Mimir's {@code blocks-storage.*} flag names.
 *
 * @param backend {@code filesystem} (the embedded default)
 * @param filesystemDir root of the filesystem bucket
 */
public record BucketConfig(String backend, Path filesystemDir) {

  /** Opens the configured bucket; fails with the bucket's location in the message. */
  public Bucket open() throws IOException {
    return new FilesystemBucket(filesystemDir);
  }

  /** Flag definitions. */
  public static final class Flags {
    private final Flag<String> backend;
    private final Flag<String> dir;

    public Flags(FlagSet fs) {
      backend = fs.oneOf("blocks-storage.backend", "filesystem", List.of("filesystem"), "Bucket that long-term"
          + " blocks are uploaded to (by the block-builder) and read from.");
      dir = fs.string("blocks-storage.filesystem.dir", "blocks", "Directory of the filesystem bucket: blocks go"
          + " to <dir>/<tenant>/<block ID>/.");
    }

    public BucketConfig build() throws ConfigException {
      if (dir.get().isBlank()) {
        throw new ConfigException("blocks-storage.filesystem.dir must not be empty");
      }
      return new BucketConfig(backend.get(), Path.of(dir.get()));
    }
  }
}
