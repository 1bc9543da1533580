package dev.weir.storage.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.bucket.Bucket.BlockRef;
import dev.weir.storage.tsdb.block.Ulid;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link Bucket} guarantees, run against each backend: blocks read back byte-exact
 * (whole files and ranges, also past the end), a block appears whole or not at all, a redone upload
 * replaces an earlier or unfinished one, and no tenant, block ID or file name escapes the bucket.
 */
abstract class BucketContract {
  static final String ID_1 = Ulid.random(1_700_000_000_000L);
  static final String ID_2 = Ulid.random(1_700_000_100_000L);
  static final String ID_3 = Ulid.random(1_700_000_200_000L);

  @TempDir Path tmp;
  Bucket bucket;

  /** A new, empty bucket for each test. */
  abstract Bucket newBucket() throws Exception;

  /**
   * Leaves what an uploader killed before {@code meta.json} leaves behind: some files of the block,
   * among them {@code chunks/000099}, which the redone upload will not have.
   */
  abstract void leaveUnfinishedUpload(String tenant, String id) throws Exception;

  @BeforeEach
  void openBucket() throws Exception {
    bucket = newBucket();
  }

  /** A local block directory with {@code meta.json} and the given files. */
  Path localBlock(String id, Map<String, byte[]> files) throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("local-" + System.nanoTime()).resolve(id));
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      Path p = dir.resolve(f.getKey());
      Files.createDirectories(p.getParent());
      Files.write(p, f.getValue());
    }
    return dir;
  }

  static Map<String, byte[]> files(String id, int seed, String... names) {
    Map<String, byte[]> m = new LinkedHashMap<>();
    m.put("meta.json", ("{\"ulid\": \"" + id + "\", \"seed\": " + seed + "}").getBytes(StandardCharsets.UTF_8));
    Random r = new Random(seed);
    for (String n : names) {
      byte[] b = new byte[1000 + r.nextInt(20_000)];
      r.nextBytes(b);
      m.put(n, b);
    }
    return m;
  }

  @Test
  void aMarkerIsWrittenWholeReplacedAndRemovedLastByADelete() throws Exception {
    Map<String, byte[]> f = files(ID_1, 7, "index", "chunks/000001");
    bucket.upload("t1", ID_1, localBlock(ID_1, f));
    bucket.putFile("t1", ID_1, DeletionMark.FILE, "{\"v\":1}".getBytes(StandardCharsets.UTF_8));
    bucket.putFile("t1", ID_1, DeletionMark.FILE, "{\"v\":2}".getBytes(StandardCharsets.UTF_8));
    assertThat(bucket.read("t1", ID_1, DeletionMark.FILE, 0, 100)).asString(StandardCharsets.UTF_8)
        .isEqualTo("{\"v\":2}");
    assertThat(bucket.list()).as("a marked block is still a block").containsExactly(new BlockRef("t1", ID_1));
    bucket.delete("t1", ID_1);
    assertThat(bucket.list()).isEmpty();
    assertThat(bucket.listIncomplete()).isEmpty();
    assertThatThrownBy(() -> bucket.size("t1", ID_1, DeletionMark.FILE)).isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void anUploadedBlockIsListedAndEveryFileReadsBackByteExact() throws Exception {
    Map<String, byte[]> f = files(ID_1, 1, "index", "chunks/000001", "chunks/000002", "tombstones");
    bucket.upload("t1", ID_1, localBlock(ID_1, f));

    assertThat(bucket.list()).containsExactly(new BlockRef("t1", ID_1));
    assertThat(bucket.listIncomplete()).isEmpty();
    assertThat(bucket.meta("t1", ID_1)).isEqualTo(f.get("meta.json"));
    for (String name : List.of("index", "chunks/000001", "chunks/000002", "tombstones")) {
      byte[] want = f.get(name);
      assertThat(bucket.size("t1", ID_1, name)).as(name).isEqualTo(want.length);
      assertThat(bucket.read("t1", ID_1, name, 0, want.length)).as(name).isEqualTo(want);
    }
  }

  @Test
  void rangeReadsReturnTheBytesAskedForAndFewerOrNoneAtTheEnd() throws Exception {
    Map<String, byte[]> f = files(ID_1, 2, "index");
    bucket.upload("t1", ID_1, localBlock(ID_1, f));
    byte[] index = f.get("index");
    int n = index.length;

    assertThat(bucket.read("t1", ID_1, "index", 100, 50)).isEqualTo(Arrays.copyOfRange(index, 100, 150));
    assertThat(bucket.read("t1", ID_1, "index", 0, 1)).isEqualTo(Arrays.copyOfRange(index, 0, 1));
    assertThat(bucket.read("t1", ID_1, "index", n - 10, 100)).isEqualTo(Arrays.copyOfRange(index, n - 10, n));
    assertThat(bucket.read("t1", ID_1, "index", n, 10)).isEmpty();
    assertThat(bucket.read("t1", ID_1, "index", n + 1000, 10)).isEmpty();
    assertThat(bucket.read("t1", ID_1, "index", 5, 0)).isEmpty();
    assertThatThrownBy(() -> bucket.read("t1", ID_1, "index", -1, 10)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void readsOfAMissingBlockOrFileThrowNoSuchFile() throws Exception {
    bucket.upload("t1", ID_1, localBlock(ID_1, files(ID_1, 3, "index")));

    assertThatThrownBy(() -> bucket.meta("t1", ID_2)).isInstanceOf(NoSuchFileException.class);
    assertThatThrownBy(() -> bucket.meta("t2", ID_1)).isInstanceOf(NoSuchFileException.class);
    assertThatThrownBy(() -> bucket.size("t1", ID_1, "chunks/000009")).isInstanceOf(NoSuchFileException.class);
    assertThatThrownBy(() -> bucket.read("t1", ID_1, "chunks/000009", 0, 10))
        .isInstanceOf(NoSuchFileException.class);
    assertThatThrownBy(() -> bucket.read("t1", ID_1, "chunks/000009", 0, 0))
        .isInstanceOf(NoSuchFileException.class);
    assertThatThrownBy(() -> bucket.read("t1", ID_2, "index", 10, 10)).isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void aDirectoryWithoutMetaJsonIsRefusedAndLeavesNoBlock() throws Exception {
    Map<String, byte[]> f = files(ID_1, 4, "index");
    f.remove("meta.json");

    assertThatThrownBy(() -> bucket.upload("t1", ID_1, localBlock(ID_1, f))).isInstanceOf(IOException.class)
        .hasMessageContaining("meta.json");
    assertThat(bucket.list()).isEmpty();
  }

  @Test
  void aSecondUploadOfTheSameIdReplacesTheBlockAndDropsFilesItLacks() throws Exception {
    bucket.upload("t1", ID_1, localBlock(ID_1, files(ID_1, 5, "index", "chunks/000001", "chunks/000002")));
    Map<String, byte[]> second = files(ID_1, 6, "index", "chunks/000001");
    bucket.upload("t1", ID_1, localBlock(ID_1, second));

    assertThat(bucket.list()).containsExactly(new BlockRef("t1", ID_1));
    assertThat(bucket.listIncomplete()).isEmpty();
    assertThat(bucket.meta("t1", ID_1)).isEqualTo(second.get("meta.json"));
    byte[] chunks = second.get("chunks/000001");
    assertThat(bucket.read("t1", ID_1, "chunks/000001", 0, chunks.length + 1)).isEqualTo(chunks);
    assertThatThrownBy(() -> bucket.size("t1", ID_1, "chunks/000002")).isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void anUnfinishedUploadIsIncompleteNotListedAndARedoneUploadReplacesIt() throws Exception {
    bucket.upload("t1", ID_1, localBlock(ID_1, files(ID_1, 7, "index")));
    leaveUnfinishedUpload("t1", ID_2);

    assertThat(bucket.list()).containsExactly(new BlockRef("t1", ID_1));
    assertThat(bucket.listIncomplete()).containsExactly(new BlockRef("t1", ID_2));

    Map<String, byte[]> redone = files(ID_2, 8, "index", "chunks/000001");
    bucket.upload("t1", ID_2, localBlock(ID_2, redone));
    assertThat(bucket.list()).containsExactly(new BlockRef("t1", ID_1), new BlockRef("t1", ID_2));
    assertThat(bucket.listIncomplete()).isEmpty();
    byte[] index = redone.get("index");
    assertThat(bucket.read("t1", ID_2, "index", 0, index.length)).isEqualTo(index);
    assertThatThrownBy(() -> bucket.size("t1", ID_2, "chunks/000099")).isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void deleteRemovesABlockOrTheLeftoversOfAnUnfinishedUploadAndIsQuietWhenAbsent() throws Exception {
    bucket.upload("t1", ID_1, localBlock(ID_1, files(ID_1, 9, "index", "chunks/000001")));
    leaveUnfinishedUpload("t1", ID_2);

    bucket.delete("t1", ID_1);
    bucket.delete("t1", ID_2);
    bucket.delete("t1", ID_3);
    bucket.delete("nobody", ID_3);

    assertThat(bucket.list()).isEmpty();
    assertThat(bucket.listIncomplete()).isEmpty();
    assertThatThrownBy(() -> bucket.size("t1", ID_1, "index")).isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void blocksAreListedByTenantThenIdAndTenantsAreSeparate() throws Exception {
    bucket.upload("tenant-b", ID_2, localBlock(ID_2, files(ID_2, 10, "index")));
    bucket.upload("tenant-a", ID_3, localBlock(ID_3, files(ID_3, 11, "index")));
    bucket.upload("tenant-a", ID_1, localBlock(ID_1, files(ID_1, 12, "index")));
    bucket.upload("tenant-b", ID_1, localBlock(ID_1, files(ID_1, 13, "index")));

    assertThat(bucket.list()).containsExactly(new BlockRef("tenant-a", ID_1), new BlockRef("tenant-a", ID_3),
        new BlockRef("tenant-b", ID_1), new BlockRef("tenant-b", ID_2));
    assertThat(bucket.meta("tenant-a", ID_1)).isNotEqualTo(bucket.meta("tenant-b", ID_1));
  }

  @Test
  void aTenantIdWithPunctuationRoundTrips() throws Exception {
    // Mimir allows these characters in tenant IDs.
    String tenant = "team_1-a.b!*'()";
    Map<String, byte[]> f = files(ID_1, 14, "index");
    bucket.upload(tenant, ID_1, localBlock(ID_1, f));

    assertThat(bucket.list()).containsExactly(new BlockRef(tenant, ID_1));
    assertThat(bucket.read(tenant, ID_1, "index", 0, 1 << 20)).isEqualTo(f.get("index"));
  }

  @Test
  void hostileTenantIdsBlockIdsAndFileNamesAreRefusedBeforeAnyWrite() throws Exception {
    Path local = localBlock(ID_1, files(ID_1, 15, "index"));
    for (String tenant : List.of("", "..", "../t2", ".hidden", "a/b", "a\\b", "/abs")) {
      assertThatThrownBy(() -> bucket.upload(tenant, ID_1, local)).as("tenant %s", tenant)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> bucket.meta(tenant, ID_1)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> bucket.delete(tenant, ID_1)).isInstanceOf(IllegalArgumentException.class);
    }
    for (String id : List.of("", "..", "not-a-ulid", "../" + ID_1, ID_1 + "/x")) {
      assertThatThrownBy(() -> bucket.upload("t1", id, local)).as("id %s", id)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> bucket.delete("t1", id)).isInstanceOf(IllegalArgumentException.class);
    }
    bucket.upload("t1", ID_1, local);
    for (String file : List.of("", "../" + ID_1 + "/index", "chunks/../../x", "/etc/passwd", "./index",
        "chunks//000001", "a\\b")) {
      assertThatThrownBy(() -> bucket.read("t1", ID_1, file, 0, 10)).as("file %s", file)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> bucket.size("t1", ID_1, file)).isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(bucket.list()).containsExactly(new BlockRef("t1", ID_1));
    assertThat(bucket.listIncomplete()).isEmpty();
  }
}
