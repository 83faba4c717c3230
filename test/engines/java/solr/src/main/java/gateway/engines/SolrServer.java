package gateway.engines;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;

import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Standalone Solr 9 (one JVM, Jetty 10 on 127.0.0.1) for the gateway's tests.
 *
 * <pre>java gateway.engines.SolrServer PORT SOLR_HOME LOG_DIR</pre>
 *
 * SOLR_HOME holds solr.xml and one folder per core (core.properties + conf/). Serves /solr.
 * Exits when its standard input reaches end of file (the harness that started it is gone).
 */
public final class SolrServer {
    private SolrServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: SolrServer PORT SOLR_HOME LOG_DIR");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        Path solrHome = Paths.get(args[1]).toAbsolutePath();
        Path logDir = Paths.get(args[2]).toAbsolutePath();
        Files.createDirectories(logDir);

        System.setProperty("solr.install.dir", solrHome.toString());
        System.setProperty("solr.log.dir", logDir.toString());
        System.setProperty("solr.solr.home", solrHome.toString());
        System.setProperty("host", "127.0.0.1");
        System.setProperty("jetty.host", "127.0.0.1");
        System.setProperty("solr.allowPaths", solrHome.toString());
        // No SolrCloud, no telemetry-like background work that the tests do not need.
        System.setProperty("solr.disableConfigSetsCreateAuthChecks", "true");

        JettyConfig config = JettyConfig.builder()
                .setContext("/solr")
                .setPort(port)
                .stopAtShutdown(true)
                .useOnlyHttp1(true)
                .build();
        JettySolrRunner runner = new JettySolrRunner(solrHome.toString(), new Properties(), config);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                if (runner.isRunning()) {
                    runner.stop();
                }
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "solr-stop"));
        runner.start();
        System.out.println("Solr ready on " + runner.getBaseUrl());
        System.out.flush();

        exitWhenStdinCloses();
        Thread.currentThread().join();
    }

    /** The harness keeps our stdin open; end of file means it died without stopping us. */
    static void exitWhenStdinCloses() {
        Thread watcher = new Thread(() -> {
            try (InputStream in = System.in) {
                byte[] buffer = new byte[256];
                while (in.read(buffer) >= 0) {
                    // discard
                }
            } catch (Exception ignored) {
                // fall through: treat as closed
            }
            System.err.println("standard input closed: shutting down");
            System.exit(0);
        }, "stdin-watch");
        watcher.setDaemon(true);
        watcher.start();
    }
}
