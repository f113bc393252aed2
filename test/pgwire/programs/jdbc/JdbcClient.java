import java.sql.*;
import java.util.Properties;

/**
 * pgjdbc (Debian's libpostgresql-jdbc-java, the driver DBeaver and Metabase use) against the
 * service's Postgres wire protocol: DatabaseMetaData as their schema browsers call it, a
 * prepared statement run past prepareThreshold (named statement, binary results), and a large
 * result read with a fetch size (a portal read a few rows at a time). Prints one line per call.
 */
public class JdbcClient {
  static String rows(ResultSet rs, int... columns) throws SQLException {
    StringBuilder out = new StringBuilder();
    int count = 0;
    while (rs.next()) {
      count++;
      StringBuilder line = new StringBuilder();
      for (int column : columns) line.append(line.length() == 0 ? "" : ",").append(rs.getString(column));
      out.append(out.length() == 0 ? "" : ";").append(line);
    }
    return count + ":" + out;
  }

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.setProperty("user", "alice");
    props.setProperty("password", args[1]);
    props.setProperty("prepareThreshold", "1");
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + args[0] + "/dune", props)) {
      DatabaseMetaData md = c.getMetaData();
      System.out.println("product " + md.getDatabaseProductName() + " " + md.getDatabaseProductVersion());
      System.out.println("catalogs " + rows(md.getCatalogs(), 1));
      System.out.println("schemas " + rows(md.getSchemas(), 1));
      System.out.println("tables " + rows(md.getTables(null, null, "%", new String[] {"TABLE", "VIEW"}), 2, 3, 4, 5));
      System.out.println("columns " + rows(md.getColumns(null, "alice", "dataset_prices", null), 4, 5, 6));
      System.out.println("keys " + rows(md.getPrimaryKeys(null, "alice", "dataset_prices"), 4));
      System.out.println("indexes " + rows(md.getIndexInfo(null, "alice", "dataset_prices", false, true), 6));
      System.out.println("imported " + rows(md.getImportedKeys(null, "alice", "dataset_prices"), 4));
      System.out.println("types " + md.getTypeInfo().next());
      try (PreparedStatement ps = c.prepareStatement("SELECT day, token, price, ? AS n FROM dataset_prices WHERE price > ? ORDER BY day")) {
        for (int round = 0; round < 3; round++) {
          ps.setInt(1, round);
          ps.setDouble(2, 2400.0);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next())
              System.out.println("prepared " + rs.getDate(1) + " " + rs.getString(2) + " " + rs.getDouble(3) + " " + rs.getInt(4));
          }
        }
      }
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.setFetchSize(1000);
        long sum = 0;
        int n = 0;
        try (ResultSet rs = s.executeQuery("SELECT i FROM range(25000) t(i)")) {
          while (rs.next()) {
            n++;
            sum += rs.getLong(1);
          }
        }
        System.out.println("fetched " + n + " " + sum);
      }
      c.commit();
    }
  }
}
