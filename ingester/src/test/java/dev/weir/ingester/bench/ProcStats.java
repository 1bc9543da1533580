package dev.weir.ingester.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU time and resident memory of a process, read from /proc (Linux). */
final class ProcStats {
  private static final double TICKS = 100.0; // USER_HZ on Linux

  private ProcStats() {}

  /** User + system CPU seconds used so far by the process (its threads included). */
  static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // Fields after the command: state is f[0]; utime is field 14 overall = f[11], stime f[12].
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS;
    } catch (IOException e) {
      return Double.NaN;
    }
  }

  /** Resident set size in bytes. */
  static long rssBytes(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException e) {
      // gone
    }
    return -1;
  }
}
