//! The web inbox (UI-1..22): one HTML page, its script (ES modules: the
//! entry `inbox.js` and the modules in `js/`, each served at its own
//! path), its style sheet and its icons, compiled into the binary
//! (`include_str!`), served at `/` by the same router as the API. Nothing
//! is fetched from another origin; the page talks to the API of its own
//! origin, or to the one origin [`HttpOptions::inbox_api`] names (UI-5),
//! and to nothing else: the Content-Security-Policy says so (UI-1).

use axum::body::Bytes;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::doors::http::options::HttpOptions;
use crate::rules::limits::MAX_FREE_TEXT_RUNES;

const PAGE: &str = include_str!("inbox.html");
/// The page's script, one ES module per route: the entry `inbox.js` (the
/// page's `<script type="module">`) and the modules it imports. Imports
/// are relative (`./js/api.js`, `./state.js`), so they resolve against
/// the page's URL under whatever prefix the router is nested at. The
/// modules' JSDoc types are checked by `tsc` (`tools/web/`).
const MODULES: [(&str, &str); 23] = [
    ("/inbox.js", include_str!("inbox.js")),
    ("/js/answer.js", include_str!("js/answer.js")),
    ("/js/api.js", include_str!("js/api.js")),
    ("/js/attempts.js", include_str!("js/attempts.js")),
    ("/js/confirm.js", include_str!("js/confirm.js")),
    ("/js/count.js", include_str!("js/count.js")),
    ("/js/dom.js", include_str!("js/dom.js")),
    ("/js/format.js", include_str!("js/format.js")),
    ("/js/history.js", include_str!("js/history.js")),
    ("/js/keys.js", include_str!("js/keys.js")),
    ("/js/limit.js", include_str!("js/limit.js")),
    ("/js/list.js", include_str!("js/list.js")),
    ("/js/link.js", include_str!("js/link.js")),
    ("/js/live.js", include_str!("js/live.js")),
    ("/js/markdown.js", include_str!("js/markdown.js")),
    ("/js/nav.js", include_str!("js/nav.js")),
    ("/js/notify.js", include_str!("js/notify.js")),
    ("/js/questions.js", include_str!("js/questions.js")),
    ("/js/quorum.js", include_str!("js/quorum.js")),
    ("/js/reach.js", include_str!("js/reach.js")),
    ("/js/session.js", include_str!("js/session.js")),
    ("/js/settled.js", include_str!("js/settled.js")),
    ("/js/state.js", include_str!("js/state.js")),
];
const STYLE: &str = include_str!("inbox.css");
const ICON: &str = include_str!("icon.svg");

/// UI-20: the favicons that carry the waiting count, `icons/count-1.svg`
/// to `count-9.svg` and `count-9plus.svg`, served by the router itself so
/// the policy keeps `img-src 'self'`.
const COUNTS: [&str; 10] = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "9+"];

/// The icon with a badge holding `label` (a count, or `9+`).
fn count_icon(label: &str) -> String {
    let body = ICON
        .trim_end()
        .strip_suffix("</svg>")
        .unwrap_or(ICON.trim_end());
    let size = if label.len() > 1 { 10 } else { 13 };
    format!(
        "{body}<circle cx=\"23\" cy=\"9\" r=\"9\" fill=\"#d93025\" stroke=\"#fff\" stroke-width=\"1.5\"/>\
         <text x=\"23\" y=\"13.5\" font-family=\"Arial, sans-serif\" font-size=\"{size}\" \
         font-weight=\"700\" text-anchor=\"middle\" fill=\"#fff\">{label}</text></svg>"
    )
}

/// The path of the icon for `label`.
fn count_path(label: &str) -> String {
    format!("/icons/count-{}.svg", label.replace('+', "plus"))
}

/// Where the page's `<meta name="clarion-api">` goes in the template.
const API_PLACEHOLDER: &str = "{{api}}";
/// Where VAL-5's limit goes, so the page's UI-7 check reads the one
/// constant the server enforces.
const LIMIT_PLACEHOLDER: &str = "{{text_limit}}";
/// Where the page's mode goes: `inbox`, or `link` for an answer link's
/// one-bundle page (LINK-2).
const MODE_PLACEHOLDER: &str = "{{mode}}";
/// The page's own files, relative to where it is served: nothing before
/// them at the inbox's root, `../` from `/a/<token>`, so both work under
/// any prefix.
const ROOT_PLACEHOLDER: &str = "{{root}}";

/// LINK-2: the one page every link that does not open gets, whatever the
/// reason: the same bytes, no script, nothing about the token.
const LINK_GONE: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>This link no longer works</title>\n</head>\n<body>\n\
<h1>This link no longer works</h1>\n\
<p>It may have expired or been withdrawn. Ask whoever sent it for a new one.</p>\n\
</body>\n</html>\n";

/// One asset, with the headers every response of the page carries.
#[derive(Clone)]
struct Asset {
    body: Bytes,
    content_type: &'static str,
    policy: HeaderValue,
}

impl IntoResponse for Asset {
    fn into_response(self) -> Response {
        let mut response = self.body.into_response();
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        // UI-1: only this origin's script and style, nothing inline, no
        // framing; the API may be one other origin (UI-5).
        headers.insert(CONTENT_SECURITY_POLICY, self.policy);
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        // Revalidated on every load, so a new binary's page is never mixed
        // with an old script.
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

/// UI-1's policy: `default-src 'self'`, no inline script or style, no
/// plugins, no framing (`frame-ancestors 'none'`), no `<base>`, no form
/// posts; `connect-src` adds the API's origin when it is another.
fn content_security_policy(api_origin: Option<&str>) -> HeaderValue {
    let connect = match api_origin {
        Some(origin) => format!("'self' {origin}"),
        None => "'self'".to_owned(),
    };
    let policy = format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
         connect-src {connect}; object-src 'none'; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    );
    HeaderValue::from_str(&policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"))
}

/// The page with its API origin filled in (empty: this origin). The
/// origin was checked by [`HttpOptions::inbox_api`] to be a bare
/// `scheme://host[:port]`, so it needs no escaping; escaping anyway keeps
/// the template safe from any future caller.
fn page(api_origin: Option<&str>) -> Bytes {
    page_in(api_origin, "inbox", "")
}

fn page_in(api_origin: Option<&str>, mode: &str, root: &str) -> Bytes {
    let api = api_origin.map(escape_attribute).unwrap_or_default();
    Bytes::from(
        PAGE.replace(API_PLACEHOLDER, &api)
            .replace(LIMIT_PLACEHOLDER, &MAX_FREE_TEXT_RUNES.to_string())
            .replace(MODE_PLACEHOLDER, mode)
            .replace(ROOT_PLACEHOLDER, root),
    )
}

/// LINK-2: `/a/<token>`'s reply: the page in one-bundle mode when the
/// link opens, else the one `404` page. Both with the page's policy,
/// `Referrer-Policy: no-referrer` and `Cache-Control: no-store` (the
/// token is in the address), and never a cookie.
pub(crate) fn link_page(options: &HttpOptions, opens: bool) -> Response {
    let api = options.inbox_api.as_deref();
    let (status, body) = if opens {
        (StatusCode::OK, page_in(api, "link", "../"))
    } else {
        (
            StatusCode::NOT_FOUND,
            Bytes::from_static(LINK_GONE.as_bytes()),
        )
    };
    let mut response = Asset {
        body,
        content_type: "text/html; charset=utf-8",
        policy: content_security_policy(api),
    }
    .into_response();
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn escape_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page's routes (UI-1): `/`, `/inbox.js` and the modules under
/// `/js/`, `/inbox.css`, `/icon.svg`. They read no state; generic so a
/// test can serve them alone.
pub(crate) fn routes<S>(options: &HttpOptions) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let api = options.inbox_api.as_deref();
    let policy = content_security_policy(api);
    let asset = |body: Bytes, content_type: &'static str| {
        let asset = Asset {
            body,
            content_type,
            policy: policy.clone(),
        };
        get(move || std::future::ready(asset.clone()))
    };
    let router = MODULES
        .iter()
        .fold(Router::new(), |router, (path, source)| {
            router.route(
                path,
                asset(
                    Bytes::from_static(source.as_bytes()),
                    "text/javascript; charset=utf-8",
                ),
            )
        });
    let router = COUNTS.iter().fold(router, |router, label| {
        router.route(
            &count_path(label),
            asset(Bytes::from(count_icon(label)), "image/svg+xml"),
        )
    });
    router
        .route("/", asset(page(api), "text/html; charset=utf-8"))
        .route(
            "/inbox.css",
            asset(
                Bytes::from_static(STYLE.as_bytes()),
                "text/css; charset=utf-8",
            ),
        )
        .route(
            "/icon.svg",
            asset(Bytes::from_static(ICON.as_bytes()), "image/svg+xml"),
        )
}
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use axum::body::{to_bytes, Body};
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    use super::*;

    fn served(path: &str) -> Option<&'static str> {
        MODULES
            .iter()
            .find(|(served, _)| *served == path)
            .map(|(_, source)| *source)
    }

    /// The modules a module's static imports name (`import … from
    /// './x.js'`, `import './x.js'`, `export … from './x.js'`), as
    /// written. Each import is on one line, and the script imports
    /// nothing dynamically: this reader would miss either.
    fn imports(module: &str, source: &str) -> Vec<String> {
        let mut found = Vec::new();
        for line in source.lines().map(str::trim) {
            let comment = line.starts_with("//") || line.starts_with("/*") || line.starts_with('*');
            assert!(
                comment || !line.contains("import("),
                "{module}: a dynamic import; import statically so the test sees it: {line}"
            );
            let import = line.starts_with("import ");
            let reexport = line.starts_with("export ") && line.contains(" from ");
            if !(import || reexport) {
                continue;
            }
            let from = match line.rsplit_once(" from ") {
                Some((_, from)) => from,
                None => &line["import ".len()..],
            };
            let quoted = from.trim_end_matches(';').trim();
            let specifier = ['\'', '"'].iter().find_map(|quote| {
                quoted
                    .strip_prefix(*quote)
                    .and_then(|rest| rest.strip_suffix(*quote))
            });
            let Some(specifier) = specifier else {
                panic!("{module}: write each import on one line: {line}");
            };
            found.push(specifier.to_owned());
        }
        found
    }

    /// `relative` resolved against the URL path `base`, as a browser
    /// resolves a relative URL (`.` and `..` segments; none above `/`).
    fn resolve(base: &str, relative: &str) -> String {
        let mut segments: Vec<&str> = base.split('/').collect();
        segments.pop();
        for segment in relative.split('/') {
            match segment {
                "." => {}
                ".." => {
                    assert!(segments.len() > 1, "{relative} leaves the root from {base}");
                    segments.pop();
                }
                segment => segments.push(segment),
            }
        }
        segments.join("/")
    }

    /// UI-1: every module any module imports is one of the served ones,
    /// named relative to the importer (so it resolves under any prefix;
    /// a bare name would need an import map, another origin the policy
    /// refuses). A new module cannot be imported and forgotten here.
    #[test]
    fn every_imported_module_is_served() {
        for (path, source) in MODULES {
            for specifier in imports(path, source) {
                assert!(
                    specifier.starts_with("./") || specifier.starts_with("../"),
                    "{path}: import {specifier:?} by a relative URL"
                );
                let target = resolve(path, &specifier);
                assert!(
                    served(&target).is_some(),
                    "{path} imports {specifier:?}, {target}, which is not in MODULES"
                );
            }
        }
    }

    /// UI-19: no module builds markup from strings: agent text becomes
    /// text nodes and elements made one by one, never HTML parsed.
    #[test]
    fn no_module_parses_html() {
        for (path, source) in MODULES {
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "DOMParser",
                "createContextualFragment",
                "srcdoc",
            ] {
                assert!(!source.contains(sink), "{path} uses {sink}");
            }
        }
    }

    /// UI-20: the count icons are the plain icon with a badge, one per
    /// count and `9+`, each well-formed SVG.
    #[tokio::test]
    async fn count_icons_are_served() {
        let app: Router = routes::<()>(&HttpOptions::default());
        for (label, path) in [
            ("1", "/icons/count-1.svg"),
            ("9", "/icons/count-9.svg"),
            ("9+", "/icons/count-9plus.svg"),
        ] {
            let (parts, body) = get(&app, path).await;
            assert_eq!(parts.status, StatusCode::OK, "{path}");
            assert_eq!(
                parts
                    .headers
                    .get(CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok()),
                Some("image/svg+xml")
            );
            assert!(
                body.starts_with("<svg ") && body.trim_end().ends_with("</svg>"),
                "{body}"
            );
            assert!(body.contains(&format!(">{label}</text>")), "{body}");
        }
        let (parts, _) = get(&app, "/icons/count-10.svg").await;
        assert_eq!(parts.status, StatusCode::NOT_FOUND);
    }

    /// Every script file beside this one is a served module.
    #[test]
    fn every_script_file_is_served() {
        let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/doors/http/web");
        for (folder, prefix) in [(web.clone(), "/"), (web.join("js"), "/js/")] {
            for entry in std::fs::read_dir(&folder).expect("the web folder") {
                let name = entry.expect("a file").file_name();
                let name = name.to_string_lossy();
                if name.ends_with(".js") {
                    let path = format!("{prefix}{name}");
                    assert!(served(&path).is_some(), "{path} is not in MODULES");
                }
            }
        }
    }

    async fn get(app: &Router, path: &str) -> (axum::http::response::Parts, String) {
        let request = Request::get(path).body(Body::empty()).expect("a request");
        let response = app.clone().oneshot(request).await.expect("a response");
        let (parts, body) = response.into_parts();
        let body = to_bytes(body, usize::MAX).await.expect("the body");
        (parts, String::from_utf8(body.to_vec()).expect("UTF-8"))
    }

    /// UI-1 under a prefix: the page opened as `/inbox/` loads its entry
    /// module, and through it every module (transitively), each with the
    /// page's headers; no module is served that nothing imports. (axum's
    /// `nest_service` routes `/inbox/` to the page; `nest` only `/inbox`.)
    #[tokio::test]
    async fn the_page_loads_every_module_under_a_prefix() {
        let app: Router =
            Router::new().nest_service("/inbox", routes::<()>(&HttpOptions::default()));
        let (parts, page) = get(&app, "/inbox/").await;
        assert_eq!(parts.status, StatusCode::OK);
        let tags: Vec<&str> = page.split("<script").skip(1).collect();
        assert_eq!(tags.len(), 1, "one script element");
        let tag = &tags[0][..tags[0].find('>').expect("a tag")];
        assert!(
            tag.contains("type=\"module\""),
            "the entry is a module: {tag}"
        );
        let src = tag
            .split("src=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a src");
        let mut queue = vec![resolve("/inbox/", src)];
        let mut loaded = BTreeSet::new();
        let policy = content_security_policy(None);
        while let Some(url) = queue.pop() {
            if !loaded.insert(url.clone()) {
                continue;
            }
            let (parts, source) = get(&app, &url).await;
            assert_eq!(parts.status, StatusCode::OK, "{url}");
            let header = |name| {
                parts
                    .headers
                    .get(name)
                    .and_then(|value| value.to_str().ok())
            };
            assert_eq!(
                header(CONTENT_TYPE),
                Some("text/javascript; charset=utf-8"),
                "{url}"
            );
            assert_eq!(
                header(CONTENT_SECURITY_POLICY),
                policy.to_str().ok(),
                "{url}"
            );
            assert_eq!(header(X_CONTENT_TYPE_OPTIONS), Some("nosniff"), "{url}");
            assert_eq!(header(REFERRER_POLICY), Some("no-referrer"), "{url}");
            assert_eq!(header(CACHE_CONTROL), Some("no-cache"), "{url}");
            queue.extend(
                imports(&url, &source)
                    .iter()
                    .map(|specifier| resolve(&url, specifier)),
            );
        }
        let expected: BTreeSet<String> = MODULES
            .iter()
            .map(|(path, _)| format!("/inbox{path}"))
            .collect();
        assert_eq!(
            loaded, expected,
            "the modules the page loads are the served ones"
        );
    }
}
