package dev.weir.storage.bucket;

import java.nio.file.Files;
import java.nio.file.Path;

/** The bucket contract on a local directory. */
class FilesystemBucketTest extends BucketContract {
  Path root;

  @Override
  Bucket newBucket() throws Exception {
    root = tmp.resolve("bucket");
    return new FilesystemBucket(root);
  }

  @Override
  void leaveUnfinishedUpload(String tenant, String id) throws Exception {
    Path dir = Files.createDirectories(root.resolve(tenant).resolve(".upload-" + id).resolve("chunks"));
    Files.write(dir.resolve("000099"), new byte[] {1, 2, 3});
  }
}
