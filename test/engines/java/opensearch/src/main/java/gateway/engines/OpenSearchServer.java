package gateway.engines;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * A single-node OpenSearch 2.19 cluster on 127.0.0.1 for the gateway's tests, security off (the security
 * plugin is not on the classpath).
 *
 * <pre>java gateway.engines.OpenSearchServer HTTP_PORT HOME_DIR</pre>
 *
 * HOME_DIR receives config/, data/ and logs/. The transport layer takes an ephemeral port.
 * Exits when its standard input reaches end of file (the harness that started it is gone).
 */
public final class OpenSearchServer {
    private OpenSearchServer() {
    }

    /** A real node whose plugins are classes on the classpath: there is no plugins/ or modules/ folder when it runs from Maven jars. */
    static final class ClasspathPluginNode extends Node {
        ClasspathPluginNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: OpenSearchServer HTTP_PORT HOME_DIR");
            System.exit(2);
        }
        int httpPort = Integer.parseInt(args[0]);
        Path home = Paths.get(args[1]).toAbsolutePath();
        Path config = Files.createDirectories(home.resolve("config"));
        Path data = Files.createDirectories(home.resolve("data"));
        Path logs = Files.createDirectories(home.resolve("logs"));

        Settings settings = Settings.builder()
                .put("path.home", home.toString())
                .put("path.data", data.toString())
                .put("path.logs", logs.toString())
                .put("cluster.name", "gateway-test")
                .put("node.name", "node-1")
                .put("network.host", "127.0.0.1")
                .put("http.port", httpPort)
                .put("transport.port", 0)
                .put("discovery.type", "single-node")
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                .put("action.destructive_requires_name", false)
                .put("logger.level", "INFO")
                .put("http.type", Netty4Plugin.NETTY_HTTP_TRANSPORT_NAME)
                .put("transport.type", Netty4Plugin.NETTY_TRANSPORT_NAME)
                .build();
        LogConfigurator.registerErrorListener();
        LogConfigurator.setNodeName("node-1");
        LogConfigurator.configureWithoutConfig(settings);

        Node node = new ClasspathPluginNode(
                InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), config, () -> "node-1"),
                List.of(Netty4Plugin.class));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "opensearch-stop"));
        node.start();
        System.out.println("OpenSearch ready on http://127.0.0.1:" + httpPort);
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
