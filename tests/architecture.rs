//! The rules that keep the code's shape (`ARCHITECTURE.md`, "Rules"), checked on the source
//! itself: only the HTTP layer speaks poem, the top-level modules import one another without
//! cycles and only downwards (domain, then HTTP, then the assembly), each table is written by
//! the one module that owns it, and every module opens with a `//!` line saying what it is for.
//!
//! The source is read as Rust tokens (comments and doc text are not code, so a doc comment that
//! mentions poem does not count); each rule names the files that break it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The workspace crates whose every module needs a `//!` line.
const CRATE_SOURCES: [&str; 6] = [
    "src",
    "entity/src",
    "migration/src",
    "codegen/src",
    "bench/src",
    "client/src",
];

/// The only places allowed to name `poem` or `poem_openapi`.
fn may_speak_http(file: &SourceFile) -> bool {
    file.module.first().is_some_and(|top| top == "http") || file.relative == Path::new("main.rs")
}

/// Which top-level modules may import which: the HTTP layer is reached only from the assembly
/// (`app`), the assembly only from the command line, and the command line from nothing in the
/// library (the binary's `main.rs` is the root and may use anything).
const IMPORTED_ONLY_BY: [(&str, &[&str]); 3] =
    [("http", &["app"]), ("app", &["cli"]), ("cli", &[])];

/// Each table and the module (a file, or a folder and everything in it) that alone writes it.
const TABLE_OWNERS: [(&str, &str); 30] = [
    ("api_key", "api_keys.rs"),
    ("client", "api_keys.rs"),
    ("company", "companies.rs"),
    ("connection", "connections/"),
    ("connection_credential", "connections/"),
    ("oauth_client", "oauth_clients.rs"),
    ("link_settings", "links/"),
    ("link_session", "links/"),
    ("link_attempt", "links/"),
    ("migration_batch", "managed_migrations/"),
    ("migration_row", "managed_migrations/"),
    ("migration_attestation", "managed_migrations/"),
    ("migration_reference", "managed_migrations/"),
    ("pull_operation", "sync/operations/"),
    ("data_generation", "store/"),
    ("record", "store/"),
    ("record_staging", "store/"),
    ("retained_generation", "store/"),
    ("record_generation", "store/"),
    ("record_key", "store/"),
    ("server_instance", "rate_limits.rs"),
    ("sync_request", "sync/operations/"),
    ("sync_request_operation", "sync/operations/"),
    ("sync_watermark", "sync/watermarks.rs"),
    ("platform_pace", "sync/pacing.rs"),
    ("sync_settings", "sync/settings.rs"),
    ("webhook_endpoint", "webhooks/"),
    ("webhook_message", "webhooks/"),
    ("webhook_delivery", "webhooks/"),
    ("webhook_attempt", "webhooks/"),
];

/// SeaORM calls that write through an entity.
const ENTITY_WRITES: [&str; 7] = [
    "insert",
    "insert_many",
    "update",
    "update_many",
    "delete",
    "delete_many",
    "delete_by_id",
];

/// One `.rs` file of the library crate.
struct SourceFile {
    /// The path under `src/`.
    relative: PathBuf,
    /// The module path it defines: `src/http/api/mod.rs` is `["http", "api"]`.
    module: Vec<String>,
    /// The file's code as tokens.
    tokens: TokenStream,
}

fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(under: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![under.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("read a source folder") {
            let path = entry.expect("read a folder entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|last| matches!(last.as_str(), "mod" | "lib" | "main"))
    {
        parts.pop();
    }
    parts
}

fn library_files() -> Vec<SourceFile> {
    let source = repository_root().join("src");
    rust_files(&source)
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&source).expect("under src").to_path_buf();
            let text = std::fs::read_to_string(&path).expect("read a source file");
            let tokens: TokenStream = text
                .parse()
                .unwrap_or_else(|error| panic!("{} does not tokenize: {error}", path.display()));
            SourceFile {
                module: module_path(&relative),
                relative,
                tokens,
            }
        })
        .collect()
}

/// Every token of a stream, groups entered, in order; a group appears before its contents.
fn flatten(stream: &TokenStream) -> Vec<TokenTree> {
    let mut flat = Vec::new();
    for tree in stream.clone() {
        flat.push(tree.clone());
        if let TokenTree::Group(group) = &tree {
            flat.extend(flatten(&group.stream()));
        }
    }
    flat
}

fn is_ident(tree: &TokenTree, name: &str) -> bool {
    matches!(tree, TokenTree::Ident(ident) if ident == name)
}

fn ident_name(tree: &TokenTree) -> Option<String> {
    match tree {
        TokenTree::Ident(ident) => Some(ident.to_string()),
        _ => None,
    }
}

/// Whether `tokens[at..]` starts with `::` (two joint colons).
fn path_separator_at(tokens: &[TokenTree], at: usize) -> bool {
    matches!(
        (tokens.get(at), tokens.get(at + 1)),
        (Some(TokenTree::Punct(first)), Some(TokenTree::Punct(second)))
            if first.as_char() == ':' && second.as_char() == ':'
    )
}

/// The first segment of every path that follows `root ::` in a stream: `crate::a::b` gives `a`;
/// `crate::{a, b::c}` gives `a` and `b`.
fn segments_after(stream: &TokenStream, root: &str) -> Vec<String> {
    let tokens: Vec<TokenTree> = stream.clone().into_iter().collect();
    let mut found = Vec::new();
    for (at, tree) in tokens.iter().enumerate() {
        if let TokenTree::Group(group) = tree {
            found.extend(segments_after(&group.stream(), root));
        }
        if !is_ident(tree, root) || !path_separator_at(&tokens, at + 1) {
            continue;
        }
        match tokens.get(at + 3) {
            Some(TokenTree::Ident(ident)) => found.push(ident.to_string()),
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                found.extend(group_heads(&group.stream()));
            }
            _ => {}
        }
    }
    found
}

/// The first identifier of each comma-separated item of a `use` group.
fn group_heads(stream: &TokenStream) -> Vec<String> {
    let mut heads = Vec::new();
    let mut at_item_start = true;
    for tree in stream.clone() {
        match &tree {
            TokenTree::Punct(punct) if punct.as_char() == ',' => at_item_start = true,
            TokenTree::Ident(ident) if at_item_start => {
                heads.push(ident.to_string());
                at_item_start = false;
            }
            _ => at_item_start = false,
        }
    }
    heads
}

/// The top-level modules a file names through `crate::` or through enough `super::` to leave
/// its own top-level module.
fn top_level_imports(file: &SourceFile) -> BTreeSet<String> {
    let mut imported: BTreeSet<String> =
        segments_after(&file.tokens, "crate").into_iter().collect();
    let tokens = flatten(&file.tokens);
    let mut at = 0;
    while at < tokens.len() {
        let starts_path = at == 0 || !path_separator_at(&tokens, at.saturating_sub(2));
        if starts_path && is_ident(&tokens[at], "super") {
            let mut ups = 0;
            let mut cursor = at;
            while is_ident(&tokens[cursor], "super") && path_separator_at(&tokens, cursor + 1) {
                ups += 1;
                cursor += 3;
                if cursor >= tokens.len() {
                    break;
                }
            }
            if ups >= file.module.len()
                && let Some(name) = tokens.get(cursor).and_then(ident_name)
            {
                imported.insert(name);
            }
            at = cursor.max(at + 1);
        } else {
            at += 1;
        }
    }
    if let Some(own) = file.module.first() {
        imported.remove(own);
    }
    imported
}

fn names_poem(tokens: &TokenStream) -> bool {
    flatten(tokens)
        .iter()
        .any(|tree| is_ident(tree, "poem") || is_ident(tree, "poem_openapi"))
}

/// The tables a file writes: through SeaORM (`table::ActiveModel`,
/// `table::Entity::update_many()`, ...) or through SQL text (`INSERT INTO table`, ...).
fn tables_written(tokens: &TokenStream) -> BTreeSet<String> {
    let flat = flatten(tokens);
    let mut written = BTreeSet::new();
    for (at, tree) in flat.iter().enumerate() {
        let Some(table) = ident_name(tree) else {
            continue;
        };
        if !path_separator_at(&flat, at + 1) {
            continue;
        }
        let next = flat.get(at + 3);
        if next.is_some_and(|next| is_ident(next, "ActiveModel")) {
            written.insert(table.clone());
        }
        if next.is_some_and(|next| is_ident(next, "Entity"))
            && path_separator_at(&flat, at + 4)
            && flat
                .get(at + 6)
                .and_then(ident_name)
                .is_some_and(|call| ENTITY_WRITES.contains(&call.as_str()))
        {
            written.insert(table);
        }
    }
    for tree in &flat {
        if let TokenTree::Literal(literal) = tree {
            let text = literal.to_string();
            let unprefixed = text.trim_start_matches('r').trim_start_matches('#');
            written.extend(sql_tables_written(unprefixed));
        }
    }
    written
}

/// The tables a piece of SQL text inserts into, updates or deletes from.
fn sql_tables_written(sql: &str) -> Vec<String> {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',')
        .filter(|word| !word.is_empty())
        .map(|word| {
            word.trim_matches(|c: char| matches!(c, '"' | '\\' | '#' | ';'))
                .to_string()
        })
        .collect();
    let mut tables = Vec::new();
    for (at, word) in words.iter().enumerate() {
        let table = match word.to_ascii_uppercase().as_str() {
            "INSERT" | "DELETE"
                if words.get(at + 1).is_some_and(|next| {
                    matches!(next.to_ascii_uppercase().as_str(), "INTO" | "FROM")
                }) =>
            {
                words.get(at + 2)
            }
            "UPDATE" => words.get(at + 1),
            _ => None,
        };
        if let Some(table) =
            table.filter(|table| table.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        {
            tables.push(table.clone());
        }
    }
    tables
}

fn owner_of(table: &str) -> Option<&'static str> {
    TABLE_OWNERS
        .iter()
        .find(|(name, _)| *name == table)
        .map(|(_, owner)| *owner)
}

fn owns(owner: &str, relative: &Path) -> bool {
    let relative = relative.to_string_lossy().replace('\\', "/");
    match owner.strip_suffix('/') {
        Some(folder) => relative.starts_with(&format!("{folder}/")),
        None => relative == owner,
    }
}

/// Strongly connected groups of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Search<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        groups: Vec<Vec<String>>,
    }
    impl Search<'_> {
        fn visit(&mut self, module: &str) {
            let order = self.index.len();
            self.index.insert(module.to_string(), order);
            self.low.insert(module.to_string(), order);
            self.stack.push(module.to_string());
            for next in self.edges.get(module).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let lowest = self.low[module].min(self.low[next]);
                    self.low.insert(module.to_string(), lowest);
                } else if self.stack.contains(next) {
                    let lowest = self.low[module].min(self.index[next]);
                    self.low.insert(module.to_string(), lowest);
                }
            }
            if self.low[module] == self.index[module] {
                let mut group = Vec::new();
                while let Some(member) = self.stack.pop() {
                    let done = member == module;
                    group.push(member);
                    if done {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.groups.push(group);
                }
            }
        }
    }
    let mut search = Search {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        groups: Vec::new(),
    };
    for module in edges.keys() {
        if !search.index.contains_key(module) {
            search.visit(module);
        }
    }
    search.groups
}

/// Top-level module → the top-level modules it imports, for the library's files (the crate root
/// and `main.rs` excluded: they are the root).
fn import_graph(files: &[SourceFile]) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(top) = file.module.first() else {
            continue;
        };
        edges
            .entry(top.clone())
            .or_default()
            .extend(top_level_imports(file));
    }
    edges
}

#[test]
fn only_the_http_layer_imports_poem() {
    let offenders: Vec<String> = library_files()
        .iter()
        .filter(|file| !may_speak_http(file) && names_poem(&file.tokens))
        .map(|file| file.relative.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "poem and poem_openapi belong to src/http/ (and main.rs); also named in: {offenders:?}"
    );
    for crate_source in ["entity/src", "migration/src"] {
        for path in rust_files(&repository_root().join(crate_source)) {
            let tokens: TokenStream = std::fs::read_to_string(&path)
                .expect("read a source file")
                .parse()
                .expect("tokenize");
            assert!(!names_poem(&tokens), "{} names poem", path.display());
        }
    }
}

#[test]
fn top_level_modules_import_one_another_without_cycles() {
    let graph = import_graph(&library_files());
    assert!(
        graph.contains_key("http") && graph["http"].contains("connections"),
        "the scan sees the HTTP layer's imports: {graph:?}"
    );
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "import cycles between top-level modules: {found:?}"
    );
}

#[test]
fn layers_are_imported_only_from_above() {
    let graph = import_graph(&library_files());
    for (layer, allowed) in IMPORTED_ONLY_BY {
        let importers: Vec<&String> = graph
            .iter()
            .filter(|(module, imports)| {
                imports.contains(layer) && !allowed.contains(&module.as_str())
            })
            .map(|(module, _)| module)
            .collect();
        assert!(
            importers.is_empty(),
            "`{layer}` may be imported only by {allowed:?}, but {importers:?} import it"
        );
    }
}

#[test]
fn each_table_is_written_by_its_own_module() {
    let entity_source = repository_root().join("entity/src");
    for path in rust_files(&entity_source) {
        let table = path
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        if table != "lib" {
            assert!(
                owner_of(&table).is_some(),
                "entity `{table}` has no owning module in TABLE_OWNERS"
            );
        }
    }
    let mut strays = Vec::new();
    let mut seen = BTreeSet::new();
    for file in library_files() {
        for table in tables_written(&file.tokens) {
            seen.insert(table.clone());
            match owner_of(&table) {
                Some(owner) if owns(owner, &file.relative) => {}
                Some(owner) => strays.push(format!(
                    "{} writes `{table}`, which belongs to {owner}",
                    file.relative.display()
                )),
                None => {}
            }
        }
    }
    assert!(
        strays.is_empty(),
        "tables written outside their module: {strays:#?}"
    );
    let unseen: Vec<&str> = TABLE_OWNERS
        .iter()
        .map(|(table, _)| *table)
        .filter(|table| !seen.contains(*table))
        .collect();
    assert!(
        unseen.is_empty(),
        "the scan found no writer of {unseen:?}: is it blind?"
    );
}

#[test]
fn every_module_opens_with_a_doc_line() {
    let mut undocumented = Vec::new();
    for crate_source in CRATE_SOURCES.into_iter().chain(["tests"]) {
        for path in rust_files(&repository_root().join(crate_source)) {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            if !text.starts_with("//!") {
                undocumented.push(path.display().to_string());
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "modules without a `//!` line on top: {undocumented:?}"
    );
}

mod scanners {
    //! The rules above are only as good as the scanners they use: these show each scanner
    //! catching what it must and passing what it must not catch.

    use super::*;

    fn tokens(code: &str) -> TokenStream {
        code.parse().expect("test code tokenizes")
    }

    fn file(relative: &str, code: &str) -> SourceFile {
        SourceFile {
            relative: PathBuf::from(relative),
            module: module_path(Path::new(relative)),
            tokens: tokens(code),
        }
    }

    #[test]
    fn crate_paths_count_plain_grouped_and_nested_uses() {
        let found = top_level_imports(&file(
            "sync/engine/run.rs",
            "use crate::{error::Error, store}; use crate::data::DataType;
             fn f() { crate::paging::PageRequest::first(); super::super::super::tenant::Tenant::new(); super::super::retry(); }
             use super::lease;",
        ));
        let expected: BTreeSet<String> = ["data", "error", "paging", "store", "tenant"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn poem_is_caught_in_paths_and_derives_but_not_in_doc_comments() {
        assert!(names_poem(&tokens(
            "#[derive(poem_openapi::Object)] struct A;"
        )));
        assert!(names_poem(&tokens("use poem::Request;")));
        assert!(!names_poem(&tokens("/// Rendered by poem.\nstruct A;")));
    }

    #[test]
    fn writes_are_caught_through_seaorm_and_sql() {
        let written = tables_written(&tokens(
            r#"let a = connection::ActiveModel { ..Default::default() };
               pull_operation::Entity::update_many();
               company::Entity::find();
               let sql = "INSERT INTO \"record\" (a) VALUES (1); DELETE FROM record_staging WHERE x";
               let read = "SELECT * FROM api_key";"#,
        ));
        let expected: BTreeSet<String> =
            ["connection", "pull_operation", "record", "record_staging"]
                .into_iter()
                .map(String::from)
                .collect();
        assert_eq!(written, expected);
    }

    #[test]
    fn a_cycle_is_found_and_a_chain_is_not() {
        let graph = |pairs: &[(&str, &str)]| {
            let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (from, to) in pairs {
                edges
                    .entry(from.to_string())
                    .or_default()
                    .insert(to.to_string());
            }
            edges
        };
        assert!(cycles(&graph(&[("http", "error"), ("error", "paging")])).is_empty());
        assert_eq!(
            cycles(&graph(&[
                ("http", "error"),
                ("error", "paging"),
                ("paging", "http")
            ])),
            vec![vec![
                "error".to_string(),
                "http".to_string(),
                "paging".to_string()
            ]]
        );
    }
}
