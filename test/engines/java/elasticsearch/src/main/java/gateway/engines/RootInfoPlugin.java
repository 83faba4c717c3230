package gateway.engines;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.Build;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * {@code GET /} and {@code HEAD /} (the cluster "info" endpoint that clients call first). In the Elasticsearch
 * distribution they come from the rest-root module, which Elastic does not publish on Maven Central; this answers
 * with the same fields.
 */
public class RootInfoPlugin extends Plugin implements ActionPlugin {
    private final AtomicReference<ClusterService> clusterService = new AtomicReference<>();

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService.set(services.clusterService());
        return List.of();
    }

    @Override
    public Collection<RestHandler> getRestHandlers(Settings settings, NamedWriteableRegistry namedWriteableRegistry,
            RestController restController, ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter, IndexNameExpressionResolver indexNameExpressionResolver,
            Supplier<DiscoveryNodes> nodesInCluster, Predicate<NodeFeature> clusterSupportsFeature) {
        return List.of(new BaseRestHandler() {
            @Override
            public String getName() {
                return "gateway_test_root_info";
            }

            @Override
            public List<Route> routes() {
                return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
            }

            @Override
            protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
                return channel -> {
                    if (request.method() == RestRequest.Method.HEAD) {
                        channel.sendResponse(new RestResponse(RestStatus.OK, RestResponse.TEXT_CONTENT_TYPE, BytesArray.EMPTY));
                        return;
                    }
                    ClusterService cluster = clusterService.get();
                    Build build = Build.current();
                    XContentBuilder body = channel.newBuilder();
                    body.startObject();
                    body.field("name", cluster.getNodeName());
                    body.field("cluster_name", cluster.getClusterName().value());
                    body.field("cluster_uuid", cluster.state().metadata().clusterUUID());
                    body.startObject("version");
                    body.field("number", build.qualifiedVersion());
                    body.field("build_flavor", build.flavor());
                    body.field("build_type", build.type().displayName());
                    body.field("build_hash", build.hash());
                    body.field("build_date", build.date());
                    body.field("build_snapshot", build.isSnapshot());
                    body.field("lucene_version", org.apache.lucene.util.Version.LATEST.toString());
                    body.field("minimum_wire_compatibility_version", build.minWireCompatVersion());
                    body.field("minimum_index_compatibility_version", build.minIndexCompatVersion());
                    body.endObject();
                    body.field("tagline", "You Know, for Search");
                    body.endObject();
                    channel.sendResponse(new RestResponse(RestStatus.OK, body));
                };
            }
        });
    }
}
