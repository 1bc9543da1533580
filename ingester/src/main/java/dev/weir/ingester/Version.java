package dev.weir.ingester;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The build version, filtered into {@code weir-version.properties} by Maven. */
public final class Version {
  public static final String VERSION = load();

  private Version() {}

  private static String load() {
    Properties p = new Properties();
    try (InputStream in = Version.class.getResourceAsStream("/weir-version.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      return "unknown";
    }
    return p.getProperty("version", "unknown");
  }
}
