package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.storage.tsdb.DataDirLayout;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalReader;
import dev.weir.storage.tsdb.wal.WalRecords;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code weir tool wal inspect <dir>}: for a tenant's WAL directory ({@code
 * <data-dir>/tsdb/<tenant>/wal}, Prometheus' format), its TSDB directory, or a data directory
 * (every tenant), one
 * JSON line per tenant: segments, checkpoint, records, series,
 * samples, time range, the highest Kafka offset, and the first damage (segment and byte offset;
 * a torn tail when no intact record follows it). Read-only ({@link WalReader#inspect}): nothing
 * is repaired. Exit code 1 when any WAL is damaged, with one line per damaged WAL on stderr. A WAL
 * still in Weir's former format ({@code weir-wal/}, or the old layout's {@code <data-dir>/wal/<tenant>})
 * is not read: a line on stderr names it (the next start converts it).
 */
final class WalInspectCommand extends ToolCommand {
  @Override
  String name() {
    return "wal inspect";
  }

  @Override
  String summary() {
    return "Segments, records, series, samples, time range and damage of WALs (read-only).";
  }

  @Override
  String arguments() {
    return "<tenant WAL dir | tenant TSDB dir | data dir>";
  }

  /** Counts what a WAL holds. */
  private static final class Stats implements WalRecords.Visitor {
    final Set<Labels> series = new HashSet<>();
    long samples;
    long minTime = Long.MAX_VALUE;
    long maxTime = Long.MIN_VALUE;

    @Override
    public void series(int ref, Labels labels) {
      series.add(labels);
    }

    @Override
    public void sample(int ref, long t, double v) {
      samples++;
      minTime = Math.min(minTime, t);
      maxTime = Math.max(maxTime, t);
    }
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (args.size() != 1) {
      throw ToolException.usage("expects one directory: a tenant's WAL directory or a data directory");
    }
    Path dir = Path.of(args.get(0));
    int damaged = 0;
    for (Path former : formerWals(dir)) {
      err.println("weir tool wal inspect: " + former + " is a WAL in Weir's former format, not read; the next start"
          + " of Weir converts it");
    }
    for (Path wal : walDirs(dir)) {
      String tenant = tenantOf(wal);
      Stats stats = new Stats();
      WalReader.Inspection in = WalReader.inspect(wal, stats, tenant);
      out.println(line(tenant, wal, in, stats));
      if (in.damagedSegment() != null) {
        damaged++;
        out.flush();
        err.println("weir tool wal inspect: WAL of tenant " + tenant + " is damaged at " + in.damagedSegment()
            + " offset " + in.damageOffset() + ": " + in.damage() + (in.validRecordsAfterDamage() == 0
            ? " (a torn tail: no intact record follows)" : " (" + in.validRecordsAfterDamage()
            + " intact records follow: corrupt in the middle)"));
      }
    }
    return damaged == 0 ? 0 : ToolException.FAILURE;
  }

  /**
   * The WALs in Weir's former format under {@code dir} (a data or tenant TSDB directory): {@code
   * tsdb/<tenant>/weir-wal[.converting]} and the old layout's {@code wal/<tenant>}.
   */
  private static List<Path> formerWals(Path dir) throws IOException {
    List<Path> out = new ArrayList<>();
    List<Path> tenantDirs = new ArrayList<>(List.of(dir));
    Path tsdb = dir.resolve(DataDirLayout.TSDB_ROOT);
    if (Files.isDirectory(tsdb)) {
      try (Stream<Path> s = Files.list(tsdb)) {
        s.filter(Files::isDirectory).sorted().forEach(tenantDirs::add);
      }
    }
    for (Path t : tenantDirs) {
      for (String name : List.of(DataDirLayout.FORMER_WAL, DataDirLayout.CONVERTING_WAL)) {
        if (Files.isDirectory(t.resolve(name))) {
          out.add(t.resolve(name));
        }
      }
    }
    Path legacy = dir.resolve(DataDirLayout.LEGACY_WAL_ROOT);
    if (Files.isDirectory(tsdb) && Files.isDirectory(legacy) && !isWal(legacy)) {
      try (Stream<Path> s = Files.list(legacy)) {
        s.filter(Files::isDirectory).sorted().forEach(out::add);
      }
    }
    return out;
  }

  /**
   * The tenant WAL directories that {@code dir} names: itself, a tenant's TSDB directory's
   * {@code wal/}, or every tenant's of a data directory.
   */
  private static List<Path> walDirs(Path dir) throws IOException, ToolException {
    if (!Files.isDirectory(dir)) {
      throw ToolException.failure(dir + " is not a directory");
    }
    if (isWal(dir)) {
      return List.of(dir);
    }
    if (isWal(dir.resolve(DataDirLayout.WAL))) {
      return List.of(dir.resolve(DataDirLayout.WAL));
    }
    List<Path> tenants = new ArrayList<>();
    Path tsdb = dir.resolve(DataDirLayout.TSDB_ROOT);
    if (Files.isDirectory(tsdb)) {
      try (Stream<Path> s = Files.list(tsdb)) {
        s.map(t -> t.resolve(DataDirLayout.WAL)).filter(Files::isDirectory).forEach(tenants::add);
      }
    }
    if (tenants.isEmpty() && formerWals(dir).isEmpty()) {
      throw ToolException.failure(dir + " is neither a tenant WAL directory (segments 00000000, ...) nor a data"
          + " directory with tenants under tsdb/<tenant>/" + DataDirLayout.WAL + "/");
    }
    tenants.sort(java.util.Comparator.comparing(WalInspectCommand::tenantOf));
    return tenants;
  }

  /** {@code tsdb/<tenant>/wal}: the tenant is the parent's name (else the directory's own). */
  private static String tenantOf(Path wal) {
    Path name = wal.getFileName();
    Path parent = wal.toAbsolutePath().normalize().getParent();
    return name.toString().equals(DataDirLayout.WAL) && parent != null && parent.getFileName() != null
        ? parent.getFileName().toString() : name.toString();
  }

  private static boolean isWal(Path dir) throws IOException {
    return !Wal.segments(dir).isEmpty() || Checkpoint.latest(dir) != null;
  }

  private static String line(String tenant, Path wal, WalReader.Inspection in, Stats s) throws IOException {
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"tenant\":").string(tenant);
    w.raw(",\"dir\":").string(wal.toString()).raw(",\"segments\":[");
    List<Integer> segments = Wal.segments(wal);
    for (int i = 0; i < segments.size(); i++) {
      w.raw(i == 0 ? "{\"index\":" : ",{\"index\":").number(segments.get(i));
      w.raw(",\"bytes\":").number(Files.size(Wal.segmentPath(wal, segments.get(i)))).raw('}');
    }
    Checkpoint.Info cp = Checkpoint.latest(wal);
    w.raw("],\"checkpoint\":");
    if (cp == null) {
      w.raw("null");
    } else {
      w.raw("{\"index\":").number(cp.index()).raw(",\"dir\":").string(cp.dir().toString()).raw('}');
    }
    w.raw(",\"records\":").number(in.records()).raw(",\"series\":").number(s.series.size());
    w.raw(",\"samples\":").number(s.samples).raw(",\"min_time\":");
    w.raw(s.samples == 0 ? "null" : String.valueOf(s.minTime)).raw(",\"max_time\":");
    w.raw(s.samples == 0 ? "null" : String.valueOf(s.maxTime));
    w.raw(",\"max_source_offset\":").number(in.maxSourceOffset()).raw(",\"damage\":");
    if (in.damagedSegment() == null) {
      return w.raw("null}").toString();
    }
    w.raw("{\"segment\":").string(in.damagedSegment().toString()).raw(",\"offset\":").number(in.damageOffset());
    w.raw(",\"what\":").string(String.valueOf(in.damage())).raw(",\"kind\":");
    w.string(in.validRecordsAfterDamage() == 0 ? "torn-tail" : "corruption");
    return w.raw(",\"valid_records_after\":").number(in.validRecordsAfterDamage()).raw("}}").toString();
  }
}
