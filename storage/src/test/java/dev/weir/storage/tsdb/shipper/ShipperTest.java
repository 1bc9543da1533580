package dev.weir.storage.tsdb.shipper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShipperTest {
  static final long RANGE = 60_000;
  static final long NOW = 1_700_000_000_000L;
  @TempDir Path dir;
  private Path data;
  private FilesystemBucket fs;
  private FailingBucket bucket;
  private SimpleMeterRegistry registry;
  private ShippedBlocks shipped;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    data = dir.resolve("data");
    fs = new FilesystemBucket(dir.resolve("bucket"));
    bucket = new FailingBucket(fs);
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  /** A storage as a shipping ingester opens it: retention gated by the shipper's record. */
  private Tsdb openTsdb(Duration retention) throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(data).withHead(new HeadConfig(RANGE, 120)).withRetention(retention);
    Tsdb t = new Tsdb(cfg, TsdbMetrics.noop(), () -> NOW, tenant -> () -> 0);
    shipped = new ShippedBlocks(cfg);
    t.retentionGate(shipped);
    t.open();
    open.add(t);
    return t;
  }

  private Shipper shipper(Tsdb t, Duration interval) {
    registry = new SimpleMeterRegistry();
    Shipper s = new Shipper(new ShipperConfig(interval), t, () -> bucket, shipped, new ShipperMetrics(registry),
        () -> NOW);
    open.add(s);
    return s;
  }

  private double counter(String name) {
    return registry.get(name).counter().count();
  }

  private double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  /** Two series at every second in [from, to). */
  private static void write(Tsdb t, String tenant, long from, long to) {
    Appender app = t.head(tenant).appender();
    for (long ts = from; ts < to; ts += 1000) {
      for (int s = 0; s < 2; s++) {
        app.add(app.series(Labels.of("__name__", "m", "s", String.valueOf(s))), ts, ts + s);
      }
      assertThat(app.commit(true).rejections()).isEmpty();
    }
  }

  private static List<String> localIds(Tsdb t, String tenant) {
    return t.tenant(tenant).blocks().stream().map(b -> b.meta().ulid()).toList();
  }

  private List<String> bucketIds(String tenant) throws Exception {
    return fs.list().stream().filter(r -> r.tenant().equals(tenant)).map(Bucket.BlockRef::id).toList();
  }

  private Map<String, Object> bucketFileKeys() throws Exception {
    Map<String, Object> keys = new HashMap<>();
    for (Bucket.BlockRef r : fs.list()) {
      Path meta = fs.root().resolve(r.tenant()).resolve(r.id()).resolve("meta.json");
      keys.put(r.tenant() + "/" + r.id(), Files.readAttributes(meta, BasicFileAttributes.class).fileKey());
    }
    return keys;
  }

  @Test
  void shipsEveryHeadBlockOfEveryTenantExactlyOnce() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 0, 300_000); // blocks [0,1m) .. [3m,4m); the head keeps the rest
    write(t, "b", 0, 180_000);
    t.compactAll();
    assertThat(localIds(t, "a")).hasSize(4);
    assertThat(localIds(t, "b")).hasSize(2);
    Shipper s = shipper(t, Duration.ofMinutes(1));

    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(6, 0, 0));
    assertThat(bucketIds("a")).containsExactlyInAnyOrderElementsOf(localIds(t, "a"));
    assertThat(bucketIds("b")).containsExactlyInAnyOrderElementsOf(localIds(t, "b"));
    assertThat(ShipperFile.read(data.resolve("tsdb/a"))).containsExactlyInAnyOrderElementsOf(localIds(t, "a"));
    assertThat(counter("weir.ingester.shipper.uploads")).isEqualTo(6);
    assertThat(gauge("weir.ingester.shipper.last.successful.upload.timestamp.seconds")).isEqualTo(NOW / 1000.0);
    assertThat(gauge("weir.ingester.shipper.pending.blocks")).isZero();
    // The uploaded blocks are the local ones, byte for byte.
    for (Block b : t.tenant("a").blocks()) {
      assertThat(fs.meta("a", b.meta().ulid())).isEqualTo(Files.readAllBytes(b.dir().resolve("meta.json")));
    }

    assertThat(s.shipOnce()).as("nothing new: nothing uploaded").isEqualTo(new Shipper.Round(0, 0, 0));
    write(t, "a", 300_000, 360_000);
    t.compactAll();
    assertThat(s.shipOnce()).as("only the new block").isEqualTo(new Shipper.Round(1, 0, 0));
    assertThat(bucket.uploads.get()).isEqualTo(7);
    assertThat(counter("weir.ingester.shipper.syncs")).isEqualTo(3);
  }

  @Test
  void aNewShipperOverTheSameDataDirUploadsNothingAgain() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 0, 300_000);
    t.compactAll();
    Shipper first = shipper(t, Duration.ofMinutes(1));
    assertThat(first.shipOnce().uploaded()).isEqualTo(4);
    Map<String, Object> before = bucketFileKeys();
    first.close();
    t.close();
    open.clear();

    Tsdb again = openTsdb(Duration.ZERO);
    Shipper second = shipper(again, Duration.ofMinutes(1));
    assertThat(second.shipOnce()).isEqualTo(new Shipper.Round(0, 0, 0));
    assertThat(bucket.uploads.get()).isEqualTo(4);
    assertThat(counter("weir.ingester.shipper.uploads")).isZero();
    assertThat(bucketFileKeys()).as("the bucket's blocks were not rewritten").isEqualTo(before);
  }

  @Test
  void aBlockAlreadyInTheBucketIsRecordedWithoutUploadingIt() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 0, 240_000);
    t.compactAll();
    List<Block> blocks = t.tenant("a").blocks();
    assertThat(blocks).hasSize(3);
    // A crash after the upload of the first block and before the shipper file was written.
    fs.upload("a", blocks.get(0).meta().ulid(), blocks.get(0).dir());
    Object key = bucketFileKeys().get("a/" + blocks.get(0).meta().ulid());

    Shipper s = shipper(t, Duration.ofMinutes(1));
    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(2, 0, 0));
    assertThat(bucket.uploads.get()).isEqualTo(2);
    assertThat(bucketFileKeys().get("a/" + blocks.get(0).meta().ulid())).isEqualTo(key);
    assertThat(ShipperFile.read(data.resolve("tsdb/a"))).containsExactlyInAnyOrderElementsOf(localIds(t, "a"));
  }

  @Test
  void aFailingBucketKeepsTheBlocksAndALaterRoundShipsThem() throws Exception {
    Tsdb t = openTsdb(Duration.ofMinutes(2));
    write(t, "a", 0, 301_000); // newest 300s: the blocks ending at or before 180s are past retention
    bucket.down.set(true);
    t.compactAll();
    List<String> ids = localIds(t, "a");
    assertThat(ids).hasSize(4);
    Shipper s = shipper(t, Duration.ofMinutes(1));

    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(0, 4, 4));
    assertThat(counter("weir.ingester.shipper.upload.failures")).isEqualTo(4);
    assertThat(gauge("weir.ingester.shipper.pending.blocks")).isEqualTo(4);
    assertThat(gauge("weir.ingester.shipper.last.successful.upload.timestamp.seconds")).isZero();
    t.compactAll();
    assertThat(localIds(t, "a")).as("past retention but not shipped: kept").isEqualTo(ids);
    assertThat(ShipperFile.read(data.resolve("tsdb/a"))).isEmpty();

    bucket.down.set(false);
    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(4, 0, 0));
    assertThat(bucketIds("a")).containsExactlyInAnyOrderElementsOf(ids);
    t.compactAll();
    assertThat(localIds(t, "a")).as("shipped: retention applies").containsExactly(ids.get(3));
  }

  @Test
  void aBucketThatCannotBeOpenedFailsTheRoundAndIsOpenedAgainNextRound() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 0, 180_000);
    t.compactAll();
    registry = new SimpleMeterRegistry();
    java.util.concurrent.atomic.AtomicInteger opens = new java.util.concurrent.atomic.AtomicInteger();
    Shipper s = new Shipper(new ShipperConfig(Duration.ofMinutes(1)), t, () -> {
      if (opens.incrementAndGet() <= 2) {
        throw new java.io.IOException("bucket unreachable at start");
      }
      return bucket;
    }, shipped, new ShipperMetrics(registry), () -> NOW);
    open.add(s);
    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(0, 2, 2));
    assertThat(counter("weir.ingester.shipper.upload.failures")).isEqualTo(2);
    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(2, 0, 0));
    assertThat(bucketIds("a")).containsExactlyInAnyOrderElementsOf(localIds(t, "a"));
    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(0, 0, 0));
    assertThat(opens.get()).as("opened once it worked, then kept").isEqualTo(3);
  }

  @Test
  void retentionDeletesOnlyShippedBlocks() throws Exception {
    Tsdb t = openTsdb(Duration.ofMinutes(2));
    write(t, "a", 0, 301_000);
    t.compactAll();
    List<String> ids = localIds(t, "a");
    assertThat(ids).as("nothing shipped yet: every block kept").hasSize(4);
    bucket.failIds.add(ids.get(1));
    Shipper s = shipper(t, Duration.ofMinutes(1));
    assertThat(s.shipOnce()).isEqualTo(new Shipper.Round(3, 1, 1));

    t.compactAll();
    assertThat(localIds(t, "a")).as("[0,1m) and [2m,3m) shipped and gone; [1m,2m) unshipped; [3m,4m) recent")
        .containsExactly(ids.get(1), ids.get(3));
    assertThat(Files.exists(data.resolve("tsdb/a").resolve(ids.get(0)))).isFalse();

    assertThat(s.shipOnce()).as("still refused").isEqualTo(new Shipper.Round(0, 1, 1));
    assertThat(ShipperFile.read(data.resolve("tsdb/a"))).as("deleted blocks are dropped from the file")
        .containsExactly(ids.get(3));
    bucket.failIds.clear();
    assertThat(s.shipOnce().uploaded()).isEqualTo(1);
    t.compactAll();
    assertThat(localIds(t, "a")).containsExactly(ids.get(3));
  }

  @Test
  void onlyBlocksWrittenByHeadCompactionAreShipped() throws Exception {
    Path tenantDir = data.resolve("tsdb/a");
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 0, 120_000);
    t.compactAll();
    assertThat(localIds(t, "a")).hasSize(1);
    String head = localIds(t, "a").get(0);
    t.close();
    open.clear();
    String fromBuilder = Ulid.random(NOW);
    String legacy = Ulid.random(NOW);
    // A block-builder block copied into the data dir, and a head block from before blocks named their source.
    Path src = tenantDir.resolve(head);
    copyBlock(src, tenantDir.resolve(fromBuilder), fromBuilder, "\"weir\": {\"source\": \"block-builder\"}");
    copyBlock(src, tenantDir.resolve(legacy), legacy, null);

    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(localIds(again, "a")).contains(head, fromBuilder, legacy);
    Shipper s = shipper(again, Duration.ofMinutes(1));
    assertThat(s.shipOnce().uploaded()).isEqualTo(2);
    assertThat(bucketIds("a")).containsExactlyInAnyOrder(head, legacy);
    Block builderBlock = again.tenant("a").blocks().stream().filter(b -> b.meta().ulid().equals(fromBuilder))
        .findFirst().orElseThrow();
    assertThat(shipped.mayDelete("a", builderBlock)).as("never shipped, so retention must not wait for it").isTrue();
  }

  /** A copy of a block under another ID, its meta.json's weir section replaced (null: none). */
  private static void copyBlock(Path from, Path to, String id, String weirSection) throws Exception {
    Files.createDirectories(to.resolve("chunks"));
    for (String f : List.of("index", "tombstones", "chunks/000001")) {
      Files.copy(from.resolve(f), to.resolve(f));
    }
    String meta = Files.readString(from.resolve("meta.json")).replace(from.getFileName().toString(), id);
    meta = meta.replaceAll("\t\"weir\": \\{[^}]*\\},\n", weirSection == null ? "" : "\t" + weirSection + ",\n");
    assertThat(meta).doesNotContain("\"ingester\"");
    Files.writeString(to.resolve("meta.json"), meta);
  }

  @Test
  void theShipperThreadShipsEveryIntervalWithoutBeingAsked() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Shipper s = shipper(t, Duration.ofMillis(20));
    Set<Thread> before = shipperThreads();
    s.start();
    Set<Thread> started = shipperThreads();
    started.removeAll(before);
    assertThat(started).as("one named thread of its own").hasSize(1);
    write(t, "a", 0, 240_000);
    t.compactAll();
    await().atMost(10, TimeUnit.SECONDS).until(() -> bucketIds("a").size() == 3);
    assertThat(bucketIds("a")).containsExactlyInAnyOrderElementsOf(localIds(t, "a"));
    s.close();
    assertThat(started.iterator().next().isAlive()).as("close() ends the thread").isFalse();
  }

  private static Set<Thread> shipperThreads() {
    Set<Thread> out = new HashSet<>();
    Thread.getAllStackTraces().keySet().stream().filter(th -> th.getName().equals("tsdb-shipper")).forEach(out::add);
    return out;
  }

  @Test
  void aHangingBucketNeverBlocksIngestionOrCompaction() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 0, 180_000);
    t.compactAll();
    CountDownLatch release = new CountDownLatch(1);
    bucket.hang.set(release);
    Shipper s = shipper(t, Duration.ofMillis(20));
    s.start();
    assertThat(bucket.hanging.await(10, TimeUnit.SECONDS)).as("the shipper is stuck in an upload").isTrue();
    try {
      write(t, "a", 180_000, 400_000);
      t.compactAll();
      assertThat(localIds(t, "a")).hasSize(6);
      assertThat(bucketIds("a")).isEmpty();
    } finally {
      bucket.hang.set(null);
      release.countDown();
    }
    await().atMost(10, TimeUnit.SECONDS).until(() -> bucketIds("a").size() == 6);
  }
}
