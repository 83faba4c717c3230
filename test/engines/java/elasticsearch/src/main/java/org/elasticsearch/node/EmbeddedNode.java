package org.elasticsearch.node;

import java.util.Collection;

import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.MockPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;

/**
 * A real Elasticsearch node whose plugins are classes on the classpath (there is no plugins/modules folder
 * when Elasticsearch runs from Maven jars). Lives in org.elasticsearch.node to reach Node's package-private
 * construction hooks; unlike the test framework's MockNode it does not load ESTestCase (which refuses root
 * and installs test-only checks).
 */
public class EmbeddedNode extends Node {
    public EmbeddedNode(Environment environment, Collection<Class<? extends Plugin>> classpathPlugins) {
        super(NodeConstruction.prepareConstruction(environment, null, new NodeServiceProvider() {
            @Override
            PluginsService newPluginService(Environment env, PluginsLoader pluginsLoader) {
                return new MockPluginsService(env.settings(), env, classpathPlugins);
            }
        }, true));
    }
}
