package dev.weir.storage.bucket;

import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.Ulid;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * A bucket in an S3-compatible object store, laid out as Mimir's: {@code <tenant>/<block ID>/}
 * {@code meta.json}, {@code index}, {@code chunks/000001}, ... A block is complete when its
 * {@code meta.json} exists, and {@link #upload} writes {@code meta.json} last, so {@link #list()}
 * shows a block whole or not at all; the objects of an upload whose process died before
 * {@code meta.json} (and its unfinished multipart uploads) make {@link #listIncomplete()}.
 *
 * <p>No multi-object delete: GCS's S3 interoperability API lacks it, and a block has few objects.
 * {@link #size} and {@link #read} do not check {@code meta.json}: callers read blocks that
 * {@link #list()} returned. SDK errors become {@link IOException}s: 404 a
 * {@link NoSuchFileException}, 403 an {@link AccessDeniedException} (no retry fixes either).
 *
 * <p>Thread-safe. Closing it closes the client.
 */
public final class S3Bucket implements Bucket, AutoCloseable {
  private final S3Client client;
  private final S3BucketConfig config;
  private final S3Objects objects;

  S3Bucket(S3Client client, S3BucketConfig config, S3BucketMetrics metrics) {
    this.client = client;
    this.config = config;
    this.objects = new S3Objects(client, config, metrics);
  }

  /**
   * Connects and checks that the bucket exists and the credentials may use it (a HEAD request);
   * fails with the bucket and endpoint in the message.
   */
  public static S3Bucket open(S3BucketConfig config, S3BucketMetrics metrics) throws IOException {
    S3Client client = S3Clients.create(config, metrics);
    S3Bucket bucket = new S3Bucket(client, config, metrics);
    try {
      client.headBucket(HeadBucketRequest.builder().bucket(config.bucketName()).build());
      return bucket;
    } catch (S3Exception e) {
      client.close();
      String where = "bucket \"" + config.bucketName() + "\" at " + config.endpointUrl();
      throw switch (e.statusCode()) {
        case 404 -> new NoSuchFileException(where, null, "the bucket does not exist");
        case 401, 403 -> new AccessDeniedException(where, null, "access denied (HTTP " + e.statusCode()
            + "): check blocks-storage.s3.access-key-id and secret-access-key, and the bucket's policy");
        default -> new IOException("cannot use " + where + ": HTTP " + e.statusCode() + " " + e.getMessage(), e);
      };
    } catch (SdkException e) {
      client.close();
      throw new IOException("cannot reach bucket \"" + config.bucketName() + "\" at " + config.endpointUrl()
          + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String describe() {
    return "s3:" + config.endpointUrl() + "/" + config.bucketName();
  }

  /**
   * Uploads a block: an existing {@code meta.json} of that ID is deleted first (the block leaves
   * {@link #list()} rather than mixing two uploads), then every other file (sorted; multipart above
   * the threshold), then objects of the prefix that this upload does not have (an earlier attempt's
   * leftovers) are deleted and unfinished multipart uploads aborted, and {@code meta.json} is
   * written last.
   */
  @Override
  public void upload(String tenant, String id, Path localBlockDir) throws IOException {
    String prefix = prefix(tenant, id);
    Map<String, Path> files = S3Objects.filesOf(localBlockDir);
    Path meta = files.remove(BlockMeta.FILE);
    if (meta == null) {
      throw new IOException("not a block (no meta.json): " + localBlockDir);
    }
    try {
      List<String> before = objects.keys(prefix);
      if (before.contains(prefix + BlockMeta.FILE)) {
        objects.delete(prefix + BlockMeta.FILE);
      }
      for (Map.Entry<String, Path> f : files.entrySet()) {
        objects.put(prefix + f.getKey(), f.getValue());
      }
      for (String key : before) {
        if (!key.equals(prefix + BlockMeta.FILE) && !files.containsKey(key.substring(prefix.length()))) {
          objects.delete(key);
        }
      }
      objects.abortUploads(prefix);
      objects.put(prefix + BlockMeta.FILE, meta);
    } catch (SdkException e) {
      throw io("uploading " + prefix + " to " + describe(), e);
    }
  }

  @Override
  public List<BlockRef> list() throws IOException {
    return scan(false);
  }

  @Override
  public List<BlockRef> listIncomplete() throws IOException {
    return scan(true);
  }

  /**
   * One listing of the whole bucket: every block directory with whether it has a meta.json; keys
   * outside {@code <tenant>/<ULID>/} (Mimir's bucket index, markers, hidden tenants) are skipped.
   */
  private List<BlockRef> scan(boolean incomplete) throws IOException {
    Map<BlockRef, Boolean> complete = new TreeMap<>(
        Comparator.comparing(BlockRef::tenant).thenComparing(BlockRef::id));
    try {
      for (String key : objects.keys("")) {
        BlockRef ref = blockOf(key);
        if (ref != null) {
          boolean meta = key.equals(ref.tenant() + "/" + ref.id() + "/" + BlockMeta.FILE);
          complete.merge(ref, meta, Boolean::logicalOr);
        }
      }
      if (incomplete) {
        for (MultipartUpload u : objects.uploads("")) {
          BlockRef ref = blockOf(u.key());
          if (ref != null) {
            complete.merge(ref, false, Boolean::logicalOr);
          }
        }
      }
    } catch (SdkException e) {
      throw io("listing " + describe(), e);
    }
    List<BlockRef> out = new ArrayList<>();
    complete.forEach((ref, done) -> {
      if (done != incomplete) {
        out.add(ref);
      }
    });
    return out;
  }

  private static @Nullable BlockRef blockOf(String key) {
    int slash = key.indexOf('/');
    int next = slash < 0 ? -1 : key.indexOf('/', slash + 1);
    if (slash <= 0 || next < 0 || key.startsWith(".")) {
      return null;
    }
    String id = key.substring(slash + 1, next);
    return Ulid.isUlid(id) ? new BlockRef(key.substring(0, slash), id) : null;
  }

  @Override
  public byte[] meta(String tenant, String id) throws IOException {
    String key = prefix(tenant, id) + BlockMeta.FILE;
    try {
      return objects.get(key);
    } catch (SdkException e) {
      throw io(key, e);
    }
  }

  @Override
  public long size(String tenant, String id, String file) throws IOException {
    String key = prefix(tenant, id) + BlockPaths.checkFile(file);
    try {
      return objects.size(key);
    } catch (SdkException e) {
      throw io(key, e);
    }
  }

  @Override
  public byte[] read(String tenant, String id, String file, long offset, int length) throws IOException {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("negative range: offset " + offset + ", length " + length);
    }
    String key = prefix(tenant, id) + BlockPaths.checkFile(file);
    try {
      return objects.range(key, offset, length);
    } catch (SdkException e) {
      throw io(key, e);
    }
  }

  /** One PUT. Unlike the filesystem bucket, S3 has no directories: it needs no existing block. */
  @Override
  public void putFile(String tenant, String id, String file, byte[] content) throws IOException {
    String key = prefix(tenant, id) + BlockPaths.checkFile(file);
    try {
      objects.put(key, content);
    } catch (SdkException e) {
      throw io("writing " + key + " to " + describe(), e);
    }
  }

  @Override
  public void delete(String tenant, String id) throws IOException {
    String prefix = prefix(tenant, id);
    try {
      objects.deletePrefix(prefix, BlockMeta.FILE, DeletionMark.FILE);
    } catch (SdkException e) {
      throw io("deleting " + prefix + " from " + describe(), e);
    }
  }

  /** An SDK error as an IOException that says what failed; 404 and 403 keep their meaning. */
  private static IOException io(String what, SdkException e) {
    if (e instanceof S3Exception s3 && s3.statusCode() == 404) {
      return (IOException) new NoSuchFileException(what, null, s3.getMessage()).initCause(e);
    }
    if (e instanceof S3Exception s3 && s3.statusCode() == 403) {
      return (IOException) new AccessDeniedException(what, null, s3.getMessage()).initCause(e);
    }
    return new IOException(what + ": " + e.getMessage(), e);
  }

  private static String prefix(String tenant, String id) {
    return BlockPaths.checkTenant(tenant) + "/" + BlockPaths.checkId(id) + "/";
  }

  @Override
  public void close() {
    client.close();
  }
}
