//! Unit tests of the view reader: conventions, spans, runs.

use super::*;

fn parse(line: &str, options: &ViewOptions) -> Result<View, String> {
    let raw: RawView = parse_json_ids(Path::new("v.jsonl"), 1, line, ID_FIELDS).map_err(|e| e.to_string())?;
    let mut views = to_view(Path::new("v.jsonl"), 1, raw, options).map_err(|e| e.to_string())?;
    assert_eq!(views.len(), 1, "one row packs several views");
    Ok(views.remove(0))
}

fn pool(p: &str) -> ViewOptions {
    ViewOptions { pool: Some(p.into()), ..ViewOptions::default() }
}

#[test]
fn conventions_give_the_same_mask() {
    let own = parse(r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"loss_mask":[0,1,1,0]}"#, &pool("A")).unwrap();
    let trl =
        parse(r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"assistant_masks":[0,1,1,0]}"#, &pool("A")).unwrap();
    let hf = parse(r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"labels":[-100,6,7,-100]}"#, &pool("A")).unwrap();
    let shifted = parse(
        r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"labels":[6,7,-100,-100],"labels_shifted":true}"#,
        &pool("A"),
    )
    .unwrap();
    for v in [&trl, &hf, &shifted] {
        assert_eq!(v.loss_mask, own.loss_mask);
    }
    assert_eq!((own.mask_source, hf.mask_source, shifted.mask_source), ("loss_mask", "labels", "labels_shifted"));
    assert_eq!(own.family.as_deref(), Some("a__b"));
    assert_eq!(own.view_id, "A:a__b-1:1");
}

#[test]
fn shifted_labels_must_be_declared_and_conventions_must_agree() {
    let err = parse(r#"{"instance_id":"x","input_ids":[5,6,7,8],"labels":[6,7,-100,-100]}"#, &pool("A")).unwrap_err();
    assert!(err.contains("field `labels`: labels[0] equals input_ids[1]: the labels look pre-shifted"), "{err}");
    let err = parse(r#"{"instance_id":"x","input_ids":[5,6],"labels":[-100,9]}"#, &pool("A")).unwrap_err();
    assert!(err.contains("labels[1] = 9 is neither -100 nor the token"), "{err}");
    let err = parse(
        r#"{"instance_id":"x","input_ids":[5,6,7],"assistant_masks":[0,1,1],"labels":[-100,6,-100]}"#,
        &pool("A"),
    )
    .unwrap_err();
    assert!(err.contains("disagrees with assistant_masks at position 2"), "{err}");
    let err = parse(r#"{"instance_id":"x","input_ids":[5]}"#, &pool("A")).unwrap_err();
    assert!(err.contains("field `loss_mask`: missing"), "{err}");
    let err = parse(r#"{"instance_id":"x","input_ids":[5],"loss_mask":[1]}"#, &ViewOptions::default()).unwrap_err();
    assert!(err.contains("field `pool`: missing"), "{err}");
}

/// docs/formats.md: several conventions on one line must agree — every pair, the
/// error naming file, line and the field that disagrees.
#[test]
fn mask_conventions_that_disagree_are_a_load_error_for_every_pair() {
    let line = |fields: &str| format!(r#"{{"instance_id":"x","input_ids":[5,6,7,8],{fields}}}"#);
    let cases = [
        (
            r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,0,0]"#,
            "v.jsonl:1: field `assistant_masks`: disagrees with loss_mask at position 2 (assistant_masks 0, loss_mask 1)",
        ),
        (
            r#""loss_mask":[0,1,1,0],"labels":[-100,6,-100,-100]"#,
            "v.jsonl:1: field `labels`: disagrees with loss_mask at position 2 (labels -100, loss_mask 1)",
        ),
        (
            r#""assistant_masks":[0,1,1,0],"labels":[5,6,7,-100]"#,
            "v.jsonl:1: field `labels`: disagrees with assistant_masks at position 0 (labels supervised, assistant_masks 0)",
        ),
        // all three: loss_mask and labels agree, assistant_masks does not
        (
            r#""loss_mask":[0,1,1,0],"assistant_masks":[1,1,1,0],"labels":[-100,6,7,-100]"#,
            "v.jsonl:1: field `assistant_masks`: disagrees with loss_mask at position 0",
        ),
        // only assistant_masks and labels, disagreeing
        (
            r#""assistant_masks":[0,0,1,1],"labels":[-100,6,7,-100]"#,
            "v.jsonl:1: field `labels`: disagrees with assistant_masks at position 1",
        ),
        // shifted labels count as labels
        (
            r#""loss_mask":[0,1,1,0],"labels":[6,-100,-100,-100],"labels_shifted":true"#,
            "v.jsonl:1: field `labels`: disagrees with loss_mask at position 2 (labels_shifted -100, loss_mask 1)",
        ),
        // lengths disagree
        (
            r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,1]"#,
            "v.jsonl:1: field `assistant_masks`: has 3 values, loss_mask has 4: the conventions disagree",
        ),
        // the same supervised positions, other values: both masks are taken as given
        (
            r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,1,2]"#,
            "v.jsonl:1: field `assistant_masks`: disagrees with loss_mask at position 3 (assistant_masks 2, loss_mask 0)",
        ),
    ];
    for (fields, want) in cases {
        let err = parse(&line(fields), &pool("A")).unwrap_err();
        assert!(err.contains(want), "{fields}: {err}");
    }
    // agreeing conventions load, the first given is stored
    let all = parse(&line(r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,1,0],"labels":[-100,6,7,-100]"#), &pool("A"))
        .unwrap();
    assert_eq!((all.mask_source, all.loss_mask), ("loss_mask", vec![0, 1, 1, 0]));
    let two = parse(&line(r#""assistant_masks":[0,1,1,0],"labels":[-100,6,7,-100]"#), &pool("A")).unwrap();
    assert_eq!(two.mask_source, "assistant_masks");
}

#[test]
fn span_ends_are_declared_never_guessed() {
    let line = r#"{"instance_id":"x","input_ids":[1,2,3,4],"loss_mask":[0,0,1,1],
        "message_spans":[{"index":0,"role":"user","start":0,"end":1},{"index":1,"role":"assistant","start":2,"end":3}]}"#;
    let err = parse(line, &pool("A")).unwrap_err();
    assert!(err.contains("field `span_end`"), "{err}");
    let inclusive = parse(line, &ViewOptions { span_end: Some(SpanEnd::Inclusive), ..pool("A") }).unwrap();
    assert_eq!(inclusive.spans[1], (1, "assistant".to_string(), 2, 4));
    let exclusive =
        parse(&line.replace("\"loss_mask\"", "\"span_end\":\"exclusive\",\"loss_mask\""), &pool("A")).unwrap();
    assert_eq!(exclusive.spans[1], (1, "assistant".to_string(), 2, 3));
}

#[test]
fn runs_and_families() {
    assert_eq!(supervised_runs(&[0, 1, 1, 0, 1, 2, 1]), vec![(1, 3), (4, 5), (6, 7)]);
    assert_eq!(supervised_runs(&[]), vec![]);
}
