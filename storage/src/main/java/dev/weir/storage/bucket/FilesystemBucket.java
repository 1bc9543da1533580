package dev.weir.storage.bucket;

import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A bucket in a local (or mounted) directory: {@code <root>/<tenant>/<id>/}. An upload copies the
 * block into {@code <root>/<tenant>/.upload-<id>/} (every file fsynced, {@code meta.json} last)
 * and renames it into place; a block being replaced is first renamed to
 * {@code .replaced-<id>} and deleted after. Dot-directories are never blocks: Prometheus and
 * Mimir tools skip them, {@link #listIncomplete} finds them, and block directories without
 * meta.json (a deletion cut short). A delete removes meta.json first and the
 * {@link DeletionMark} last.
 *
 * <p>Thread-safe for different block IDs.
 */
public final class FilesystemBucket implements Bucket {
  private static final String UPLOAD = ".upload-";
  private static final String REPLACED = ".replaced-";
  private final Path root;

  public FilesystemBucket(Path root) throws IOException {
    this.root = root;
    Files.createDirectories(root);
  }

  public Path root() {
    return root;
  }

  @Override
  public String describe() {
    return "filesystem:" + root;
  }

  @Override
  public void upload(String tenant, String id, Path localBlockDir) throws IOException {
    checkId(id);
    Path dir = root.resolve(checkTenant(tenant));
    Files.createDirectories(dir);
    Path tmp = dir.resolve(UPLOAD + id);
    BlockWriter.deleteRecursively(tmp);
    Files.createDirectories(tmp);
    List<Path> files;
    try (Stream<Path> s = Files.walk(localBlockDir)) {
      files = s.filter(Files::isRegularFile).sorted().toList();
    }
    Path meta = null;
    for (Path f : files) {
      Path rel = localBlockDir.relativize(f);
      if (rel.toString().equals(BlockMeta.FILE)) {
        meta = f;
        continue;
      }
      copySynced(f, tmp.resolve(rel.toString()));
    }
    if (meta == null) {
      throw new IOException("not a block (no meta.json): " + localBlockDir);
    }
    copySynced(meta, tmp.resolve(BlockMeta.FILE));
    syncDir(tmp.resolve("chunks"));
    syncDir(tmp);
    Path dest = dir.resolve(id);
    Path replaced = dir.resolve(REPLACED + id);
    if (Files.exists(dest)) {
      BlockWriter.deleteRecursively(replaced);
      Files.move(dest, replaced, StandardCopyOption.ATOMIC_MOVE);
    }
    Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE);
    syncDir(dir);
    BlockWriter.deleteRecursively(replaced);
  }

  @Override
  public List<BlockRef> list() throws IOException {
    return scan(false);
  }

  @Override
  public List<BlockRef> listIncomplete() throws IOException {
    return scan(true);
  }

  private List<BlockRef> scan(boolean incomplete) throws IOException {
    List<BlockRef> out = new ArrayList<>();
    try (DirectoryStream<Path> tenants = Files.newDirectoryStream(root, Files::isDirectory)) {
      for (Path t : tenants) {
        String tenant = t.getFileName().toString();
        if (tenant.startsWith(".")) {
          continue;
        }
        try (DirectoryStream<Path> blocks = Files.newDirectoryStream(t, Files::isDirectory)) {
          for (Path b : blocks) {
            String name = b.getFileName().toString();
            if (!incomplete && Ulid.isUlid(name) && Files.exists(b.resolve(BlockMeta.FILE))) {
              out.add(new BlockRef(tenant, name));
            } else if (incomplete && name.startsWith(UPLOAD)) {
              out.add(new BlockRef(tenant, name.substring(UPLOAD.length())));
            } else if (incomplete && name.startsWith(REPLACED)) {
              out.add(new BlockRef(tenant, name.substring(REPLACED.length())));
            } else if (incomplete && Ulid.isUlid(name) && !Files.exists(b.resolve(BlockMeta.FILE))) {
              out.add(new BlockRef(tenant, name));
            }
          }
        }
      }
    }
    out.sort((a, b) -> a.tenant().equals(b.tenant()) ? a.id().compareTo(b.id()) : a.tenant().compareTo(b.tenant()));
    return out;
  }

  @Override
  public byte[] meta(String tenant, String id) throws IOException {
    checkId(id);
    return Files.readAllBytes(root.resolve(checkTenant(tenant)).resolve(id).resolve(BlockMeta.FILE));
  }

  @Override
  public long size(String tenant, String id, String file) throws IOException {
    return Files.size(file(tenant, id, file));
  }

  @Override
  public byte[] read(String tenant, String id, String file, long offset, int length) throws IOException {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("negative range: offset " + offset + ", length " + length);
    }
    try (FileChannel ch = FileChannel.open(file(tenant, id, file), StandardOpenOption.READ)) {
      int n = (int) Math.max(0, Math.min(length, ch.size() - offset));
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(n);
      while (buf.hasRemaining()) {
        if (ch.read(buf, offset + buf.position()) < 0) {
          break;
        }
      }
      return buf.array();
    }
  }

  private Path file(String tenant, String id, String file) {
    checkId(id);
    Path dir = root.resolve(checkTenant(tenant)).resolve(id);
    Path f = dir.resolve(BlockPaths.checkFile(file)).normalize();
    if (!f.startsWith(dir) || file.isEmpty()) {
      throw new IllegalArgumentException("not a file of the block: " + file);
    }
    return f;
  }

  @Override
  public void delete(String tenant, String id) throws IOException {
    checkId(id);
    Path dir = root.resolve(checkTenant(tenant));
    Path block = dir.resolve(id);
    if (Files.deleteIfExists(block.resolve(BlockMeta.FILE))) {
      syncDir(block);
    }
    if (Files.isDirectory(block)) {
      try (Stream<Path> s = Files.list(block)) {
        for (Path p : s.filter(p -> !p.getFileName().toString().equals(DeletionMark.FILE)).toList()) {
          BlockWriter.deleteRecursively(p);
        }
      }
    }
    BlockWriter.deleteRecursively(block);
    BlockWriter.deleteRecursively(dir.resolve(UPLOAD + id));
    BlockWriter.deleteRecursively(dir.resolve(REPLACED + id));
  }

  @Override
  public void putFile(String tenant, String id, String file, byte[] content) throws IOException {
    Path f = file(tenant, id, file);
    if (!Files.isDirectory(f.getParent())) {
      throw new java.nio.file.NoSuchFileException(f.getParent().toString(), null, "no such block");
    }
    Path tmp = f.resolveSibling("." + f.getFileName() + ".tmp");
    try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(content);
      while (buf.hasRemaining()) {
        out.write(buf);
      }
      out.force(true);
    }
    Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDir(f.getParent());
  }

  private static String checkTenant(String tenant) {
    return BlockPaths.checkTenant(tenant);
  }

  private static void checkId(String id) {
    BlockPaths.checkId(id);
  }

  private static void copySynced(Path from, Path to) throws IOException {
    Files.createDirectories(to.getParent());
    try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
        FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      long size = in.size();
      long pos = 0;
      while (pos < size) {
        pos += in.transferTo(pos, size - pos, out);
      }
      out.force(true);
    }
  }

  private static void syncDir(Path dir) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // Directory fsync is not supported everywhere; the files are synced.
    }
  }
}
