package dev.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container image Jib wrote in this build ({@code deploy/target/weir-image.tar}, OCI layout):
 * its config (entrypoint, user, working dir, ports, no healthcheck, labels with the version and
 * the commit, the JVM defaults of {@code bin/jvm.options}), and the image itself run: its layers
 * unpacked into a root directory and its entrypoint started with {@code --version} inside that root
 * (a user namespace with chroot), so the image's own java, libraries and jar must all work.
 */
class ImageIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String VERSION = System.getProperty("weir.version", "");

  @TempDir static Path tmp;
  static JsonNode index;
  static JsonNode config;
  static Path rootfs;

  @BeforeAll
  static void unpack() throws Exception {
    assertThat(VERSION).as("weir.version system property (set by deploy/pom.xml)").isNotEmpty();
    Path tar = Path.of(System.getProperty("weir.image.tar",
        Repo.root().resolve("deploy/target/weir-image.tar").toString()));
    assertThat(tar).as("the image tar written by jib:buildTar in the package phase").isRegularFile();
    Path oci = Files.createDirectories(tmp.resolve("oci"));
    run(List.of("tar", "-xf", tar.toString(), "-C", oci.toString()), Map.of(), 60);
    index = JSON.readTree(oci.resolve("index.json").toFile());
    JsonNode manifest = JSON.readTree(blob(oci, index.path("manifests").path(0).path("digest").asText()).toFile());
    config = JSON.readTree(blob(oci, manifest.path("config").path("digest").asText()).toFile());
    rootfs = Files.createDirectories(tmp.resolve("rootfs"));
    for (JsonNode layer : manifest.path("layers")) {   // in order: later layers overwrite earlier ones
      run(List.of("tar", "-xzf", blob(oci, layer.path("digest").asText()).toString(), "-C", rootfs.toString()),
          Map.of(), 60);
    }
  }

  static Path blob(Path oci, String digest) {
    assertThat(digest).startsWith("sha256:");
    return oci.resolve("blobs/sha256").resolve(digest.substring("sha256:".length()));
  }

  @Test
  void isTaggedWithTheProjectVersion() {
    assertThat(index.path("manifests")).hasSize(1);
    assertThat(index.path("manifests").path(0).path("annotations").path("org.opencontainers.image.ref.name").asText())
        .isEqualTo("weir:" + VERSION);
    assertThat(config.path("architecture").asText()).isEqualTo("amd64");
    assertThat(config.path("os").asText()).isEqualTo("linux");
  }

  @Test
  void configRunsTheJarAsANonRootUserInData() {
    JsonNode c = config.path("config");
    assertThat(strings(c.path("Entrypoint"))).containsExactly("/opt/java/bin/java", "-jar", "/opt/weir/weir.jar");
    assertThat(c.path("Cmd").isMissingNode() || c.path("Cmd").isNull()).as("no Cmd: arguments are Weir flags").isTrue();
    assertThat(c.path("User").asText()).isEqualTo("10001:10001");
    assertThat(c.path("WorkingDir").asText()).isEqualTo("/data");
    Set<String> ports = new TreeSet<>();
    c.path("ExposedPorts").fieldNames().forEachRemaining(ports::add);
    assertThat(ports).containsExactly("8080/tcp", "9095/tcp");
    assertThat(c.has("Healthcheck")).as("probes live in the chart, not in the image").isFalse();
  }

  @Test
  void labelsNameTheVersionAndTheCommitBuilt() throws Exception {
    JsonNode labels = config.path("config").path("Labels");
    assertThat(labels.path("org.opencontainers.image.version").asText()).isEqualTo(VERSION);
    String head = run(List.of("git", "-C", Repo.root().toString(), "rev-parse", "HEAD"), Map.of(), 30).trim();
    assertThat(head).matches("[0-9a-f]{40}");
    assertThat(labels.path("org.opencontainers.image.revision").asText()).isEqualTo(head);
  }

  @Test
  void jvmDefaultsAreThoseOfBinWeir() throws Exception {
    String defaults = Files.readAllLines(Repo.root().resolve("bin/jvm.options")).stream()
        .filter(l -> !l.startsWith("#")).collect(Collectors.joining(" ")).trim().replaceAll("\\s+", " ");
    assertThat(defaults).contains("-XX:+UseG1GC");
    assertThat(env().get("JDK_JAVA_OPTIONS")).isEqualTo(defaults);
  }

  @Test
  void holdsTheJarOfThisBuildAndAUserWithUid10001() throws Exception {
    Path jar = rootfs.resolve("opt/weir/weir.jar");
    assertThat(sha256(jar)).isEqualTo(sha256(Repo.root().resolve("ingester/target/weir.jar")));
    assertThat(Files.readAllLines(rootfs.resolve("etc/passwd"))).contains("weir:x:10001:10001:weir:/data:/sbin/nologin");
    // Writable by uid 10001 without a volume (every entry Jib writes belongs to root).
    assertThat(Files.getPosixFilePermissions(rootfs.resolve("data"))).contains(PosixFilePermission.OTHERS_WRITE);
    assertThat(Files.getPosixFilePermissions(rootfs.resolve("tmp"))).contains(PosixFilePermission.OTHERS_WRITE);
    assertThat(rootfs.resolve("opt/java/bin/java")).isExecutable();
  }

  /**
   * The entrypoint, with the image's environment, inside the unpacked root: in a user namespace
   * with chroot and a fresh /proc (what a container runtime gives), so a library missing from the
   * image fails here. Where user namespaces are not allowed, the image's own dynamic loader runs
   * the image's java with only the image's library directories (a weaker check: a library
   * missing from the image could still be found in the host's default directories).
   */
  @Test
  void theImageItselfRunsWeirVersion() throws Exception {
    Map<String, String> env = env();
    List<String> entrypoint = strings(config.path("config").path("Entrypoint"));
    List<String> cmd = new ArrayList<>();
    boolean chroot = userNamespaces();
    if (chroot) {
      cmd.addAll(List.of(onPath("unshare"), "--map-root-user", "--mount", "--pid", "--fork", "--root=" + rootfs, "--mount-proc"));
      cmd.addAll(entrypoint);
    } else {
      cmd.addAll(List.of(rootfs + "/lib64/ld-linux-x86-64.so.2", "--inhibit-cache", "--library-path",
          rootfs + "/lib/x86_64-linux-gnu"));
      entrypoint.forEach(a -> cmd.add(a.startsWith("/") ? rootfs + a : a));
    }
    cmd.add("--version");
    String out = run(cmd, env, 60);
    assertThat(out).as("chroot=%s", chroot).contains("weir, version " + VERSION);
    // The image's JVM accepted the image's JVM defaults (a bad option would have stopped it).
    assertThat(out).contains("Picked up JDK_JAVA_OPTIONS: " + env.get("JDK_JAVA_OPTIONS"));
  }

  /** The host's program: the command runs with the image's environment, whose PATH is the image's. */
  static String onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      if (Files.isExecutable(Path.of(dir, program))) {
        return Path.of(dir, program).toString();
      }
    }
    throw new IllegalStateException(program + " not found on PATH");
  }

  static boolean userNamespaces() {
    try {
      run(List.of("unshare", "--map-root-user", "true"), Map.of(), 30);
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  static Map<String, String> env() {
    Map<String, String> env = new TreeMap<>();
    for (JsonNode e : config.path("config").path("Env")) {
      String s = e.asText();
      env.put(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
    }
    return env;
  }

  static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  /** Runs a command with exactly {@code env} (when not empty), returns stdout and stderr; fails unless exit 0. */
  static String run(List<String> cmd, Map<String, String> env, int timeoutSeconds) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    if (!env.isEmpty()) {
      pb.environment().clear();
      pb.environment().putAll(env);
    }
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("timed out: " + cmd);
    }
    String text = new String(out, StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IOException(cmd + " exited " + p.exitValue() + ": " + text);
    }
    return text;
  }
}
