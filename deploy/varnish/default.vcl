# The shipped edge for the community data service (docs/edge.md): Varnish 7 with xkey from Debian's varnish-modules.
# It stores only what the service marks `public` (keyless reads under REST_AUTH=optional), indexes each answer by its
# Surrogate-Key tags, and lets the service purge them (HTTP PURGE with an `xkey` header) from its own addresses.
# Anything with X-API-Key, Authorization or Cookie goes to the service untouched and is never stored.
vcl 4.1;

import std;
import xkey;

# The service. A deployment (or a test) rewrites the two lines below: keep each on its own line.
backend default {
    .host = "127.0.0.1";
    .port = "8000";
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
}

# Where purges may come from: the service's instances. Add their addresses.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (req.http.X-Purge-All) {
            ban("obj.status != 0");
            return (synth(200, "Banned"));
        }
        if (!req.http.xkey) {
            return (synth(400, "An xkey header is required"));
        }
        # A hard purge: a purged answer is never served again, not even stale.
        set req.http.X-Purged = xkey.purge(req.http.xkey);
        return (synth(200, "Purged " + req.http.X-Purged));
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # Keyed and signed-in requests: the service answers each one (a wrong key gets its 401 there).
    if (req.http.X-API-Key || req.http.Authorization || req.http.Cookie) {
        return (pass);
    }
    # The service's own id of the request comes from the edge's (X-Varnish): a client's is not replayed.
    unset req.http.X-Request-Id;
    return (hash);
}

sub vcl_backend_fetch {
    set bereq.http.X-Request-Id = "varnish-" + bereq.xid;
}

sub vcl_backend_response {
    # A background refresh that failed keeps the entry it refreshes (served stale, stale-if-error).
    if (beresp.status >= 500 && bereq.is_bgfetch) {
        return (abandon);
    }
    # Only what the service marks public is stored; anything else is fetched again every time.
    if (beresp.http.Cache-Control !~ "(^|[ ,])public([ ,]|$)" || beresp.http.Set-Cookie || beresp.http.Vary == "*") {
        set beresp.uncacheable = true;
        set beresp.ttl = 120s;
        return (deliver);
    }
    # The tags, for xkey's index (it reads the `xkey` header of the stored object).
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
    # Kept past its s-maxage for stale-if-error: an entry that was not purged is still the current answer, and one
    # that was is gone (hard purge), so only answers of unchanged data are ever served from grace.
    if (beresp.http.Cache-Control ~ "stale-if-error=[0-9]+") {
        set beresp.grace = std.duration(
            regsub(beresp.http.Cache-Control, "^.*stale-if-error=([0-9]+).*$", "\1s"), 0s);
    }
    # The grace period covers revalidation too: keep the entry (and its ETag) to revalidate with If-None-Match.
    set beresp.keep = 1h;
    return (deliver);
}

sub vcl_backend_error {
    set beresp.http.Cache-Control = "private, no-store";
}

sub vcl_deliver {
    unset resp.http.xkey;
    unset resp.http.X-Purged;
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
