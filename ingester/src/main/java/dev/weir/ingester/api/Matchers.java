package dev.weir.ingester.api;

import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;

/** Converts protobuf label matchers; an invalid regex or type is a client error. Stateless. */
public final class Matchers {
  private Matchers() {}

  public static List<Matcher> fromProto(List<LabelMatcher> in) {
    List<Matcher> out = new ArrayList<>(in.size());
    for (LabelMatcher m : in) {
      Matcher.Type type = switch (m.getType()) {
        case EQ -> Matcher.Type.EQ;
        case NEQ -> Matcher.Type.NEQ;
        case RE -> Matcher.Type.RE;
        case NRE -> Matcher.Type.NRE;
        default -> throw new ClientErrorException("bad_data", "unknown matcher type " + m.getTypeValue());
      };
      try {
        out.add(Matcher.of(type, m.getName(), m.getValue()));
      } catch (IllegalArgumentException e) {
        throw new ClientErrorException("bad_data", e.getMessage());
      }
    }
    return out;
  }
}
