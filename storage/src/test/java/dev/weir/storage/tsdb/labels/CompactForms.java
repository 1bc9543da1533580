package dev.weir.storage.tsdb.labels;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Compact label forms for tests that the production code makes elsewhere (a WAL replay's reader). */
public final class CompactForms {
  private CompactForms() {}

  /** The compact form of {@code l} with every value in full, as a WAL replay's reading thread makes it. */
  public static byte[] valuesInFull(Labels l) {
    byte[] out = new byte[l.encoded().wireEncoding().length + 16];
    int p = 0;
    for (int k = 0; k < l.size(); k++) {
      byte[] name = l.name(k).getBytes(StandardCharsets.UTF_8);
      byte[] value = l.value(k).getBytes(StandardCharsets.UTF_8);
      int id = LabelNames.id(name, 0, name.length);
      if (id >= 0) {
        p = Labels.varint(out, p, id + 1);
      } else {
        out[p++] = 0;
        p = Labels.varint(out, p, name.length);
        System.arraycopy(name, 0, out, p, name.length);
        p += name.length;
      }
      p = CompactLabels.value(out, p, -1, value, 0, value.length);
    }
    return Arrays.copyOf(out, p);
  }
}
