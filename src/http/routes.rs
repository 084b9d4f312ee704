//! The documented routes, read from poem-openapi's operation metadata:
//! which methods each path takes (for `Allow` on a 405), which operations
//! take a body, which query parameters they read, and what path parameters
//! are called (poem-openapi reports them as `param0`, `param1`, ...).

use poem::http::Method;
use poem_openapi::registry::{MetaApi, MetaParamIn};

/// The documented routes: which methods each path takes (for `Allow` on a
/// 405), which operations take a body, which query parameters they read,
/// and what path parameters are called (poem-openapi reports them as
/// `param0`, `param1`, ...).
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<Route>,
}

#[derive(Debug)]
struct Route {
    template: Vec<String>,
    operations: Vec<Operation>,
}

/// What the middleware needs to know about one operation.
#[derive(Debug, Clone)]
pub struct Operation {
    method: Method,
    /// Its operation id (`listCompanies`), or the path of a route outside the API.
    pub name: String,
    /// Whether the operation reads a request body.
    pub takes_body: bool,
    /// The query parameters it documents.
    pub query_parameters: Vec<String>,
}

impl RouteTable {
    /// Reads the route table from poem-openapi's operation metadata.
    pub fn from_meta(apis: Vec<MetaApi>) -> Self {
        let mut table = Self::default();
        for path in apis.into_iter().flat_map(|api| api.paths) {
            let operations = path
                .operations
                .into_iter()
                .map(|operation| Operation {
                    name: operation
                        .operation_id
                        .map(str::to_owned)
                        .unwrap_or_else(|| path.path.clone()),
                    method: operation.method,
                    takes_body: operation.request.is_some(),
                    query_parameters: operation
                        .params
                        .iter()
                        .filter(|param| param.in_type == MetaParamIn::Query)
                        .map(|param| param.name.clone())
                        .collect(),
                })
                .collect();
            table.add(&path.path, operations);
        }
        table
    }

    /// Adds a route outside the API (docs, spec) that answers GET only.
    pub fn with_get_route(mut self, path: &str) -> Self {
        let operation = Operation {
            name: path.to_owned(),
            method: Method::GET,
            takes_body: false,
            query_parameters: Vec::new(),
        };
        self.add(path, vec![operation]);
        self
    }

    /// Adds a route outside the API (the hosted pages) with its method and
    /// whether it reads a body (a form).
    pub fn with_route(mut self, path: &str, method: &str, takes_body: bool) -> Self {
        let operation = Operation {
            name: path.to_owned(),
            method: Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET),
            takes_body,
            query_parameters: Vec::new(),
        };
        self.add(path, vec![operation]);
        self
    }

    fn add(&mut self, path: &str, operations: Vec<Operation>) {
        // poem-openapi keeps the `:name` form written in `#[oai(path)]`.
        let template = segments(path)
            .map(|segment| match segment.strip_prefix(':') {
                Some(name) => format!("{{{name}}}"),
                None => segment.to_owned(),
            })
            .collect::<Vec<_>>();
        match self
            .routes
            .iter_mut()
            .find(|route| route.template == template)
        {
            Some(route) => route.operations.extend(operations),
            None => self.routes.push(Route {
                template,
                operations,
            }),
        }
    }

    fn matching(&self, path: &str) -> Option<&Route> {
        let requested = segments(path).collect::<Vec<_>>();
        self.routes.iter().find(|route| {
            route.template.len() == requested.len()
                && route
                    .template
                    .iter()
                    .zip(&requested)
                    .all(|(expected, actual)| expected.starts_with('{') || expected == actual)
        })
    }

    /// The methods `path` takes (HEAD wherever GET is); empty when no route matches.
    pub fn methods(&self, path: &str) -> Vec<Method> {
        let mut methods: Vec<Method> = self
            .matching(path)
            .map(|route| {
                route
                    .operations
                    .iter()
                    .map(|op| op.method.clone())
                    .collect()
            })
            .unwrap_or_default();
        if methods.contains(&Method::GET) {
            methods.push(Method::HEAD);
        }
        methods
    }

    /// The operation `method` on `path` reaches, if documented (HEAD reaches GET's).
    pub fn operation(&self, path: &str, method: &Method) -> Option<&Operation> {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.matching(path)?
            .operations
            .iter()
            .find(|operation| operation.method == method)
    }

    /// The documented name of the parameter poem-openapi calls `internal`
    /// (`param0` is the first `{...}` segment of the route `path` matches).
    pub fn parameter_name(&self, path: &str, internal: &str) -> Option<String> {
        let index: usize = internal.strip_prefix("param")?.parse().ok()?;
        self.path_parameters(path).into_iter().nth(index)
    }

    /// The names of the path parameters of the route `path` matches.
    pub fn path_parameters(&self, path: &str) -> Vec<String> {
        self.matching(path)
            .map(|route| {
                route
                    .template
                    .iter()
                    .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|segment| !segment.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem_openapi::registry::{MetaOperation, MetaPath, MetaResponses};

    fn operation(method: Method) -> MetaOperation {
        MetaOperation {
            method,
            tags: Vec::new(),
            summary: None,
            description: None,
            external_docs: None,
            params: Vec::new(),
            request: None,
            responses: MetaResponses {
                responses: Vec::new(),
            },
            deprecated: false,
            security: Vec::new(),
            operation_id: None,
            code_samples: Vec::new(),
        }
    }
    #[test]
    fn allowed_methods_match_path_templates() {
        let allowed = RouteTable::from_meta(vec![MetaApi {
            paths: vec![MetaPath {
                path: "/companies/:companyId".to_owned(),
                operations: vec![operation(Method::GET), operation(Method::DELETE)],
            }],
        }]);
        assert_eq!(
            allowed.methods("/companies/42"),
            [Method::GET, Method::DELETE, Method::HEAD]
        );
        assert!(allowed.operation("/companies/42", &Method::HEAD).is_some());
        assert!(allowed.operation("/companies/42", &Method::PUT).is_none());
        assert!(allowed.methods("/companies/42/extra").is_empty());
        assert_eq!(
            allowed.parameter_name("/companies/42", "param0").as_deref(),
            Some("companyId")
        );
        assert_eq!(allowed.parameter_name("/companies/42", "param1"), None);
    }
}
