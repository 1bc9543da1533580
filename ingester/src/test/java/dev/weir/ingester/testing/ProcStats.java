package dev.weir.ingester.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU time and resident memory of a process, read from /proc (Linux). */
public final class ProcStats {
  private static final double TICKS = 100.0; // USER_HZ on Linux

  private ProcStats() {}

  /** User + system CPU seconds used so far by the process (its threads included). */
  public static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // Fields after the command: state is f[0]; utime is field 14 overall = f[11], stime f[12].
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS;
    } catch (IOException e) {
      return Double.NaN;
    }
  }

  /**
   * CPU seconds used so far by the process' JIT compiler threads (HotSpot names them
   * {@code C1/C2 CompilerThreadN}); 0 for a process that has none.
   */
  public static double jitCpuSeconds(long pid) {
    double sum = 0;
    try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          String stat = Files.readString(t.resolve("stat"));
          String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          if (comm.contains("CompilerThre")) {
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            sum += (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS;
          }
        } catch (IOException e) {
          // the thread ended
        }
      }
    } catch (IOException e) {
      return Double.NaN;
    }
    return sum;
  }

  /** Resident set size in bytes; -1 when the process is gone. */
  public static long rssBytes(long pid) {
    return status(pid, "VmRSS:");
  }

  /**
   * The peak resident set size in bytes since the process started ({@code VmHWM}, kept by the
   * kernel: no sampling can miss a short peak); -1 when the process is gone.
   */
  public static long peakRssBytes(long pid) {
    return status(pid, "VmHWM:");
  }

  private static long status(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException e) {
      // gone
    }
    return -1;
  }
}
