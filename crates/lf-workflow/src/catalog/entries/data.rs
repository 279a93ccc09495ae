//! Data steps: pure transformations of their input. Picks are JSONPath
//! (RFC 9535); conditions are structured operators; every step is bounded
//! by the size of its input.

use serde_json::{Map, Value, json};

use super::super::Category::Data;
use super::super::spec::{FieldKind, IoType, NodeTypeSpec, entry, field, port};
use super::{input_path, items_path};

fn aggregate_rule(c: &Map<String, Value>, _: bool) -> Option<(&'static str, String)> {
    let op = c.get("operation").and_then(Value::as_str).unwrap_or("count");
    (op != "count" && !c.contains_key("path"))
        .then(|| ("path", format!("path is required with operation \"{op}\": the field to {op}")))
}

fn splitter_rule(c: &Map<String, Value>, _: bool) -> Option<(&'static str, String)> {
    let size = c.get("chunk_size").and_then(Value::as_u64).unwrap_or(1_000);
    let overlap = c.get("chunk_overlap").and_then(Value::as_u64).unwrap_or(120);
    (overlap >= size).then(|| {
        ("chunk_overlap", format!("chunk_overlap ({overlap}) must be smaller than chunk_size ({size})"))
    })
}

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        entry("json_transform", Data, "JSON transform", "Builds a new JSON value from `template`: every object {\"$pick\": \"<field or JSONPath>\"} in it is replaced by that part of the input (null when absent); everything else is kept as written.")
            .aliases(&["transform", "reshape"])
            .caps(&["transform", "json", "reshape"])
            .io(&[IoType::Json, IoType::Object, IoType::Any], IoType::Json)
            .fields(vec![field("template", "Template", FieldKind::Json, "The value to build, with {\"$pick\": …} placeholders.").required().aliases(&["expression"])])
            .example("Shape a payload for a webhook.", json!({"template": {"title": {"$pick": "$.item.title"}, "source": "digest"}}), json!({"item": {"title": "Hi"}}), json!({"title": "Hi", "source": "digest"}), Some(("webhook_sender", "output → input")))
            .use_case("Make the exact JSON an outside service expects."),
        entry("set_variables", Data, "Set fields", "Outputs its input object with the fields of `variables` set (literal values; [[name]] in strings filled from the inputs).")
            .aliases(&["set", "assign"])
            .caps(&["set", "variables", "json"])
            .fields(vec![field("variables", "Fields", FieldKind::Object, "The fields to set and their values.").required()])
            .example("Tag items with their source.", json!({"variables": {"source": "rss"}}), json!({"title": "Hi"}), json!({"title": "Hi", "source": "rss"}), Some(("data_mapper", "output → input")))
            .use_case("Add constants or labels to the data."),
        entry("extract_field", Data, "Extract field", "Outputs the part of its input at `path` (every match as an array with `all`).")
            .aliases(&["extract", "pick", "get_field"])
            .caps(&["extract", "jsonpath", "pick"])
            .io(&[IoType::Json, IoType::Object], IoType::Any)
            .fields(vec![
                field("path", "Path", FieldKind::JsonPath, "A field name or a JSONPath such as $.data.items[0].title.").required(),
                field("all", "All matches", FieldKind::Boolean, "Output every match as an array, even one.").default(json!(false)),
            ])
            .example("Take the first title.", json!({"path": "$.items[0].title"}), json!({"items": [{"title": "Hi"}]}), json!("Hi"), Some(("prompt_template", "output → input")))
            .use_case("Hand one value of a large response to the next step."),
        entry("rename_field", Data, "Rename fields", "Outputs its input object with fields renamed by `renames` (old name → new name).")
            .aliases(&["rename"])
            .caps(&["rename", "json", "transform"])
            .io(&[IoType::Object], IoType::Object)
            .fields(vec![field("renames", "Renames", FieldKind::StringMap, "{old name: new name}.").required()])
            .example("Match a downstream field name.", json!({"renames": {"text": "content"}}), json!({"text": "Hi"}), json!({"content": "Hi"}), Some(("webhook_sender", "output → input")))
            .use_case("Adapt one step's output names to the next step's inputs."),
        entry("filter_items", Data, "Filter", "Keeps the elements of the array at `items_path` for which `condition` holds (its paths are read from each element).")
            .aliases(&["filter"])
            .caps(&["filter", "array", "condition"])
            .io(&[IoType::Array], IoType::Array)
            .outputs(vec![port("items", IoType::Array, "The elements kept."), port("count", IoType::Number, "How many.")])
            .fields(vec![field("condition", "Condition", FieldKind::Condition, "Tested on each element.").required(), items_path()])
            .example("Keep high scores.", json!({"condition": {"path": "$.score", "op": "gte", "value": 80}}), json!([{"score": 90}, {"score": 10}]), json!({"items": [{"score": 90}], "count": 1}), Some(("loop_map", "items → input")))
            .use_case("Drop what the next steps should not see."),
        entry("aggregate", Data, "Aggregate", "Counts, sums, averages, takes the least or greatest of, or collects a field over the array at `items_path`, as a whole or per `group_by` value.")
            .aliases(&["group", "group_by", "reduce"])
            .caps(&["aggregate", "group", "sum", "count"])
            .io(&[IoType::Array], IoType::Json)
            .fields(vec![
                field("operation", "Operation", FieldKind::Select, "What to compute.").default(json!("count")).options(&["count", "sum", "avg", "min", "max", "collect"]),
                field("path", "Field", FieldKind::JsonPath, "The field of each element to compute over (not needed to count)."),
                field("group_by", "Group by", FieldKind::JsonPath, "A field of each element to group by: the output is then an object keyed by its values.").aliases(&["groupBy"]),
                items_path(),
            ])
            .rule(aggregate_rule)
            .example("Count items per source.", json!({"operation": "count", "group_by": "source"}), json!([{"source": "a"}, {"source": "b"}, {"source": "a"}]), json!({"a": 2, "b": 1}), Some(("prompt_template", "output → input")))
            .use_case("Report totals before a summary."),
        entry("sort", Data, "Sort", "Sorts the array at `items_path` by the field at `by` (numbers as numbers, then strings; missing last), stably.")
            .aliases(&["order_by"])
            .caps(&["sort", "order", "array"])
            .io(&[IoType::Array], IoType::Array)
            .fields(vec![
                field("by", "Sort by", FieldKind::JsonPath, "The field of each element to sort by.").required().aliases(&["sortBy"]),
                field("order", "Order", FieldKind::Select, "Ascending or descending.").default(json!("asc")).options(&["asc", "desc"]),
                items_path(),
            ])
            .example("Newest first.", json!({"by": "date", "order": "desc"}), json!([{"date": "2026-01-01"}, {"date": "2026-02-01"}]), json!([{"date": "2026-02-01"}, {"date": "2026-01-01"}]), Some(("split_in_batches", "output → input")))
            .use_case("Put the most relevant items first."),
        entry("deduplicate", Data, "Deduplicate", "Drops later elements of the array at `items_path` whose `key_path` value (or whole value) was seen before.")
            .aliases(&["dedupe", "unique"])
            .caps(&["deduplicate", "unique", "array"])
            .io(&[IoType::Array], IoType::Array)
            .fields(vec![field("key_path", "Key", FieldKind::JsonPath, "The field that identifies an element; omit to compare whole elements.").aliases(&["keyPath"]), items_path()])
            .example("One entry per link.", json!({"key_path": "url"}), json!([{"url": "a"}, {"url": "a"}]), json!([{"url": "a"}]), Some(("loop_map", "output → input")))
            .use_case("Merge feeds without repeats."),
        entry("split_in_batches", Data, "Split in batches", "Cuts the array at `items_path` into arrays of `batch_size`.")
            .aliases(&["batch", "chunk_items"])
            .caps(&["batch", "split", "array"])
            .io(&[IoType::Array], IoType::Array)
            .outputs(vec![port("batches", IoType::Array, "The arrays, in order.")])
            .fields(vec![items_path(), field("batch_size", "Batch size", FieldKind::Integer, "Elements per batch.").default(json!(25)).range(1.0, 1_000.0).aliases(&["batchSize"])])
            .example("Send rows 2 at a time.", json!({"batch_size": 2}), json!([1, 2, 3]), json!({"batches": [[1, 2], [3]]}), Some(("loop_map", "batches → input")))
            .use_case("Stay under an outside service's batch limit."),
        entry("text_splitter", Data, "Split text", "Cuts the text at `input_path` into chunks of `chunk_size` characters overlapping by `chunk_overlap`, at whitespace where it can.")
            .aliases(&["chunk", "split_text"])
            .caps(&["split", "chunk", "text"])
            .io(&[IoType::Text], IoType::Documents)
            .outputs(vec![port("chunks", IoType::Array, "The texts, in order."), port("count", IoType::Number, "How many.")])
            .fields(vec![
                field("chunk_size", "Chunk size", FieldKind::Integer, "Characters per chunk.").default(json!(1_000)).range(50.0, 100_000.0).aliases(&["chunkSize"]),
                field("chunk_overlap", "Overlap", FieldKind::Integer, "Characters shared by neighbouring chunks.").default(json!(120)).range(0.0, 10_000.0).aliases(&["chunkOverlap"]),
                input_path("output"),
            ])
            .rule(splitter_rule)
            .example("Split a long page for summaries.", json!({"chunk_size": 50, "chunk_overlap": 10}), json!("Rust 2024 ships let chains. They flatten nested if-let code. Upgrade with cargo fix."), json!({"chunks": ["Rust 2024 ships let chains. They flatten nested ", "nested if-let code. Upgrade with cargo fix."], "count": 2}), Some(("loop_map", "chunks → input")))
            .use_case("Fit long texts into a model's context, one chunk at a time."),
        entry("data_mapper", Data, "Map fields", "Outputs an object with one field per entry of `mapping`, each the part of the input its pick selects (null when absent).")
            .aliases(&["map_fields", "mapper"])
            .caps(&["transform", "map", "json"])
            .io(&[IoType::Any], IoType::Json)
            .fields(vec![field("mapping", "Mapping", FieldKind::PathMap, "{output field: a field name or JSONPath of the input}.").required()])
            .example("Flatten an API response.", json!({"mapping": {"title": "$.data.title", "author": "$.data.author.name"}}), json!({"data": {"title": "Hi", "author": {"name": "Ada"}}}), json!({"title": "Hi", "author": "Ada"}), Some(("email_send", "title → subject")))
            .use_case("Turn any input into the fields the next step needs."),
    ]
}
