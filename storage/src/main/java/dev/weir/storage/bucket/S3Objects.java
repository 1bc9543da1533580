package dev.weir.storage.bucket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The object operations {@link S3Bucket} is made of, on one bucket: listing, single and multipart
 * puts, range gets, deletes. Throws the SDK's unchecked exceptions (the SDK has retried by then);
 * the bucket turns them into {@link IOException}s.
 *
 * <p>Thread-safe (the client is).
 */
final class S3Objects {
  /** HTTP 416: a range that starts at or past the end of the object. */
  private static final int RANGE_NOT_SATISFIABLE = 416;

  private final S3Client client;
  private final String bucket;
  private final S3BucketConfig config;
  private final S3BucketMetrics metrics;

  S3Objects(S3Client client, S3BucketConfig config, S3BucketMetrics metrics) {
    this.client = client;
    this.bucket = config.bucketName();
    this.config = config;
    this.metrics = metrics;
  }

  /** The regular files under a local block directory by '/'-separated relative path, sorted. */
  static Map<String, Path> filesOf(Path dir) throws IOException {
    Map<String, Path> out = new TreeMap<>();
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path f : s.filter(Files::isRegularFile).toList()) {
        out.put(dir.relativize(f).toString().replace('\\', '/'), f);
      }
    }
    return out;
  }

  /** Every key under {@code prefix}, in key order. */
  List<String> keys(String prefix) {
    List<String> out = new ArrayList<>();
    ListObjectsV2Request req = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix).build();
    for (S3Object o : client.listObjectsV2Paginator(req).contents()) {
      out.add(o.key());
    }
    return out;
  }

  /** Multipart uploads under {@code prefix} that were neither completed nor aborted. */
  List<MultipartUpload> uploads(String prefix) {
    List<MultipartUpload> out = new ArrayList<>();
    String keyMarker = null;
    String idMarker = null;
    while (true) {
      String km = keyMarker;
      String im = idMarker;
      ListMultipartUploadsResponse r = client.listMultipartUploads(b -> b.bucket(bucket).prefix(prefix)
          .keyMarker(km).uploadIdMarker(im));
      out.addAll(r.uploads());
      if (!Boolean.TRUE.equals(r.isTruncated())) {
        return out;
      }
      keyMarker = r.nextKeyMarker();
      idMarker = r.nextUploadIdMarker();
    }
  }

  void abortUploads(String prefix) {
    for (MultipartUpload u : uploads(prefix)) {
      client.abortMultipartUpload(b -> b.bucket(bucket).key(u.key()).uploadId(u.uploadId()));
    }
  }

  void delete(String key) {
    client.deleteObject(b -> b.bucket(bucket).key(key));
  }

  /**
   * Deletes {@code prefix + first} before the rest, so a complete block disappears at once, and
   * {@code prefix + last} after the rest, so a deletion cut short is still marked as one.
   */
  void deletePrefix(String prefix, String first, String last) {
    List<String> keys = keys(prefix);
    if (keys.remove(prefix + first)) {
      delete(prefix + first);
    }
    boolean hadLast = keys.remove(prefix + last);
    for (String key : keys) {
      delete(key);
    }
    abortUploads(prefix);
    if (hadLast) {
      delete(prefix + last);
    }
  }

  /** Writes a small object in one PUT (S3 replaces it whole: readers see old or new). */
  void put(String key, byte[] content) {
    client.putObject(b -> b.bucket(bucket).key(key).contentLength((long) content.length),
        RequestBody.fromBytes(content));
    metrics.uploaded(content.length);
  }

  /** Uploads a file: one PUT, or a multipart upload above the threshold. */
  void put(String key, Path file) throws IOException {
    long size = Files.size(file);
    if (size > config.multipartThresholdBytes()) {
      putMultipart(key, file, size);
    } else {
      client.putObject(b -> b.bucket(bucket).key(key).contentLength(size), RequestBody.fromFile(file));
    }
    metrics.uploaded(size);
  }

  /**
   * Parts are read into memory one at a time, so that the SDK can send a part again on a retry.
   * Any failure aborts the upload, so that its parts do not linger (and cost) in the bucket.
   */
  private void putMultipart(String key, Path file, long size) throws IOException {
    String uploadId = client.createMultipartUpload(b -> b.bucket(bucket).key(key)).uploadId();
    boolean done = false;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      List<CompletedPart> parts = new ArrayList<>();
      ByteBuffer buf = ByteBuffer.allocate((int) config.partSizeBytes());
      for (long off = 0; off < size; off += config.partSizeBytes()) {
        buf.clear().limit((int) Math.min(config.partSizeBytes(), size - off));
        while (buf.hasRemaining()) {
          if (ch.read(buf, off + buf.position()) < 0) {
            throw new IOException(file + " shrank while it was uploaded");
          }
        }
        buf.flip();
        int number = parts.size() + 1;
        String etag = client.uploadPart(b -> b.bucket(bucket).key(key).uploadId(uploadId).partNumber(number)
            .contentLength((long) buf.remaining()), RequestBody.fromByteBuffer(buf)).eTag();
        parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
      }
      client.completeMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(uploadId)
          .multipartUpload(m -> m.parts(parts)));
      done = true;
    } finally {
      if (!done) {
        abortQuietly(key, uploadId);
      }
    }
  }

  private void abortQuietly(String key, String uploadId) {
    try {
      client.abortMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(uploadId));
    } catch (RuntimeException e) {
      // The upload failed already; its parts stay until the next upload of this block aborts them
      // (or the bucket's lifecycle rule does).
    }
  }

  byte[] get(String key) {
    return client.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
  }

  long size(String key) {
    return client.headObject(b -> b.bucket(bucket).key(key)).contentLength();
  }

  /** Up to {@code length} bytes from {@code offset}: empty past the end, fewer when the file ends first. */
  byte[] range(String key, long offset, int length) {
    if (length == 0) {
      size(key); // a missing object still fails
      return new byte[0];
    }
    try {
      ResponseBytes<GetObjectResponse> r = client.getObjectAsBytes(b -> b.bucket(bucket).key(key)
          .range("bytes=" + offset + "-" + (offset + length - 1)));
      byte[] bytes = r.asByteArray();
      if (r.response().contentRange() == null) {
        // 200 with the whole object: a server that ignores Range.
        int from = (int) Math.min(offset, bytes.length);
        return Arrays.copyOfRange(bytes, from, (int) Math.min(bytes.length, offset + length));
      }
      return bytes;
    } catch (S3Exception e) {
      if (e.statusCode() == RANGE_NOT_SATISFIABLE) {
        size(key); // 416 for an empty object too; a missing one is 404 here
        return new byte[0];
      }
      throw e;
    }
  }
}
