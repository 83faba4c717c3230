package gateway.engines;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import javax.servlet.DispatcherType;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.apache.chemistry.opencmis.inmemory.server.InMemoryServiceFactoryImpl;
import org.apache.chemistry.opencmis.server.impl.CmisRepositoryContextListener;
import org.apache.chemistry.opencmis.server.impl.atompub.CmisAtomPubServlet;
import org.apache.chemistry.opencmis.server.impl.browser.CmisBrowserBindingServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.FilterHolder;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * OpenCMIS InMemory repository in an embedded Jetty 9.4, for the gateway's tests.
 *
 * <pre>java gateway.engines.CmisServer PORT CONTEXT_PATH REPOSITORY_PROPERTIES TEMP_DIR PASSWORD</pre>
 *
 * Serves the browser binding at CONTEXT/browser/* and AtomPub 1.1 at CONTEXT/atom11/* on 127.0.0.1
 * (no SOAP binding). Exits when its standard input reaches end of file (the harness that started it is gone).
 * Every request needs Basic credentials with PASSWORD, under any user name: OpenCMIS InMemory checks no
 * password itself, and the gateway's `userMapping: actor` sends each gateway user's name with the
 * connector's one password, as to a repository that trusts the gateway. A connector that loses or garbles
 * its credentials is then refused (401), as a real repository would refuse it.
 */
public final class CmisServer {
    private CmisServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: CmisServer PORT CONTEXT_PATH REPOSITORY_PROPERTIES TEMP_DIR PASSWORD");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        String contextPath = args[1];
        Path propertiesFile = Paths.get(args[2]);
        File tempDir = Paths.get(args[3]).toFile();
        byte[] password = args[4].getBytes(StandardCharsets.UTF_8);
        Files.createDirectories(tempDir.toPath());

        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(propertiesFile, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        Map<String, String> parameters = new HashMap<>();
        for (String name : properties.stringPropertyNames()) {
            parameters.put(name, properties.getProperty(name).trim());
        }
        parameters.putIfAbsent("InMemoryServer.TempDir", tempDir.getAbsolutePath());

        InMemoryServiceFactoryImpl factory = new InMemoryServiceFactoryImpl();
        factory.init(parameters);

        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        context.setContextPath(contextPath);
        context.setAttribute(CmisRepositoryContextListener.SERVICES_FACTORY, factory);
        context.setAttribute("javax.servlet.context.tempdir", tempDir);
        context.setMaxFormContentSize(-1);
        context.addFilter(new FilterHolder(new PasswordFilter(password)), "/*", EnumSet.of(DispatcherType.REQUEST));

        String callContextHandler = "org.apache.chemistry.opencmis.server.shared.BasicAuthCallContextHandler";
        ServletHolder browser = new ServletHolder("cmisbrowser", new CmisBrowserBindingServlet());
        browser.setInitParameter("callContextHandler", callContextHandler);
        browser.setInitOrder(1);
        context.addServlet(browser, "/browser/*");

        ServletHolder atom = new ServletHolder("cmisatom11", new CmisAtomPubServlet());
        atom.setInitParameter("callContextHandler", callContextHandler);
        atom.setInitParameter("cmisVersion", "1.1");
        atom.setInitOrder(2);
        context.addServlet(atom, "/atom11/*");

        server.setHandler(context);
        server.setStopAtShutdown(true);
        server.start();
        System.out.println("CMIS server ready on http://127.0.0.1:" + port + contextPath + "/browser");
        System.out.flush();

        exitWhenStdinCloses();
        server.join();
        factory.destroy();
    }

    /** Refuses (401) a request without Basic credentials whose password is the server's. */
    static final class PasswordFilter implements Filter {
        private final byte[] password;

        PasswordFilter(byte[] password) {
            this.password = password;
        }

        @Override
        public void init(FilterConfig config) {
            // nothing to set up
        }

        @Override
        public void destroy() {
            // nothing held
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException, ServletException {
            if (accepted(((HttpServletRequest) request).getHeader("Authorization"))) {
                chain.doFilter(request, response);
                return;
            }
            HttpServletResponse answer = (HttpServletResponse) response;
            answer.setStatus(401);
            answer.setHeader("WWW-Authenticate", "Basic realm=\"CMIS\"");
            answer.setContentType("application/json");
            answer.getWriter().write("{\"exception\":\"permissionDenied\",\"message\":\"Unauthorized: missing or wrong credentials\"}");
        }

        private boolean accepted(String header) {
            if (header == null || !header.regionMatches(true, 0, "Basic ", 0, 6)) return false;
            String decoded;
            try {
                decoded = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return false;
            }
            int colon = decoded.indexOf(':');
            return colon > 0 && MessageDigest.isEqual(decoded.substring(colon + 1).getBytes(StandardCharsets.UTF_8), password);
        }
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
