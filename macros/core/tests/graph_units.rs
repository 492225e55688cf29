//! Unit tests of the graph pipeline's pieces: spec positions and suggestions, expressions over
//! dims, and the dataflow's reduction and capture schedules.

mod diag {
    use kgraph_codegen::graph::spec::diag::{suggest, SourceMap};

    #[test]
    fn positions_are_one_based_and_count_chars() {
        let text = "a = 1\n[x]\nké = \"v\"\n";
        let map = SourceMap::new("f.toml", text);
        assert_eq!(map.line_col(0), (1, 1));
        assert_eq!(map.line_col(6), (2, 1));
        let v = text.find("\"v\"").unwrap();
        assert_eq!(map.line_col(v), (3, 6));
        let r = map.render(&(v..v + 3), "bad");
        assert_eq!(r, "f.toml:3:6: bad\n   |\n 3 | ké = \"v\"\n   |      ^^^");
    }

    #[test]
    fn suggestions_only_for_close_names() {
        assert_eq!(suggest("fet", ["feat", "raw"]), "; did you mean `feat`?");
        assert_eq!(suggest("zzzz", ["feat", "raw"]), "");
    }
}

mod expr {
    use std::collections::BTreeMap;

    use kgraph_codegen::graph::spec::expr::{parse, Ratio, OVERFLOW};

    fn dims() -> BTreeMap<String, i128> {
        [("n".to_string(), 1000), ("m".to_string(), 3)].into_iter().collect()
    }

    fn value(src: &str) -> Ratio {
        parse(src).unwrap().eval(&dims()).unwrap()
    }

    #[test]
    fn precedence_and_rounding() {
        assert_eq!(value("n * m + 2 * (m - 1)").whole(), Some(3004));
        assert_eq!(value("ceil(n / 128)").whole(), Some(8));
        assert_eq!(value("floor(n / 128)").whole(), Some(7));
        assert_eq!(value("ceil(-n / 128)").whole(), Some(-7));
        assert_eq!(value("n / m").to_string(), "1000/3");
        assert_eq!(value("min(n, m) + max(n, 2 * m) % 7").whole(), Some(3 + 1000 % 7));
        assert_eq!(value("1_024").whole(), Some(1024));
    }

    #[test]
    fn errors_point_into_the_text() {
        assert_eq!(parse("n *").unwrap_err().span, 3..3);
        assert_eq!(parse("n ** 2").unwrap_err().span, 3..4);
        assert_eq!(parse("ceil(n, m)").unwrap_err().message, "`ceil` takes 1 argument(s), got 2");
        assert_eq!(parse("sqrt(n)").unwrap_err().span, 0..4);
        assert_eq!(parse("(n").unwrap_err().message, "expected `)`, found the end");
        assert_eq!(parse("n $").unwrap_err().span, 2..3);
        let e = parse("n + q").unwrap();
        assert_eq!(e.names(), vec![("n", 0..1), ("q", 4..5)]);
        assert_eq!(e.eval(&dims()).unwrap_err(), "unknown dim `q`");
        assert_eq!(parse("n / (m - 3)").unwrap().eval(&dims()).unwrap_err(), "division by zero");
    }

    /// Found by `tests/prop_graph_spec.rs`: `i128::MIN / -1` and `i128::MIN % -1` panicked.
    #[test]
    fn i128_min_by_minus_one_is_an_overflow_error_or_exact_not_a_panic() {
        let min = "(-170141183460469231731687303715884105727 - 1)";
        let eval = |src: String| parse(&src).unwrap().eval(&dims());
        assert_eq!(eval(min.to_string()).unwrap().whole(), Some(i128::MIN));
        assert_eq!(eval(format!("{min} / -1")).unwrap_err(), OVERFLOW);
        assert_eq!(eval(format!("{min} / (0 - {min})")).unwrap_err(), OVERFLOW);
        assert_eq!(eval(format!("1 / {min}")).unwrap_err(), OVERFLOW);
        assert_eq!(eval(format!("{min} / 2")).unwrap().whole(), Some(i128::MIN / 2));
        assert_eq!(eval(format!("{min} % -1")).unwrap().whole(), Some(0));
        assert_eq!(eval(format!("{min} % 3")).unwrap().whole(), Some(i128::MIN.rem_euclid(3)));
        assert_eq!(eval(format!("ceil({min} / 3)")).unwrap().whole(), Some(i128::MIN / 3));
        assert_eq!(eval(format!("-{min}")).unwrap_err(), OVERFLOW);
    }
}

mod dataflow {
    use kgraph_codegen::graph::dataflow::{reduce, schedule, serial_schedule, Edge, Schedule, Step};

    fn e(from: usize, to: usize) -> Edge {
        Edge { from, to, causes: vec![] }
    }

    #[test]
    fn reduction_drops_implied_edges_only() {
        let edges = vec![e(0, 1), e(0, 2), e(1, 2), e(2, 3), e(0, 3)];
        let r: Vec<(usize, usize)> = reduce(4, &edges).iter().map(|e| (e.from, e.to)).collect();
        assert_eq!(r, vec![(0, 1), (1, 2), (2, 3)]);
    }

    /// The edges a capture records, after checking that every launch and record happens on a
    /// stream that is part of the capture (the capturing stream, or one that waited on it).
    fn captured_edges(n: usize, s: &Schedule) -> Vec<(usize, usize)> {
        let mut joined = vec![false; s.side_streams + 1];
        joined[0] = true;
        for step in &s.steps {
            match *step {
                Step::Record { stream, .. } => assert!(joined[stream], "record on a stream outside the capture"),
                Step::Wait { stream, .. } => joined[stream] = true,
                Step::Launch { stream, .. } => assert!(joined[stream], "launch on a stream outside the capture"),
            }
        }
        let edges: Vec<(usize, usize)> = s.captured_edges().into_iter().map(|(f, t, _)| (f, t)).collect();
        assert!(n == 0 || edges.iter().all(|(a, b)| a < b));
        edges
    }

    #[test]
    fn schedule_captures_exactly_the_reduced_edges() {
        let cases: Vec<(usize, Vec<Edge>)> = vec![
            (6, vec![e(0, 1), e(0, 2), e(0, 3), e(0, 4), e(1, 5), e(2, 5), e(3, 5), e(4, 5)]),
            (3, vec![]),
            (4, vec![e(0, 1), e(1, 2), e(2, 3)]),
            (5, vec![e(0, 2), e(1, 2), e(2, 3), e(1, 4)]),
            (6, vec![e(0, 3), e(1, 3), e(2, 4), e(3, 5), e(4, 5)]),
        ];
        for (n, edges) in cases {
            let s = schedule(n, &edges, &vec![false; n]);
            let mut want: Vec<(usize, usize)> = edges.iter().map(|e| (e.from, e.to)).collect();
            want.sort();
            assert_eq!(captured_edges(n, &s), want, "{s:?}");
        }
        let chain = schedule(4, &[e(0, 1), e(1, 2), e(2, 3)], &[false; 4]);
        assert_eq!((chain.side_streams, chain.events), (0, 0));
        let fan = schedule(6, &[e(0, 1), e(0, 2), e(0, 3), e(0, 4), e(1, 5), e(2, 5), e(3, 5), e(4, 5)], &[false; 6]);
        assert_eq!(fan.side_streams, 3);
    }

    #[test]
    fn pdl_relaxes_only_a_sole_same_stream_predecessor() {
        let fan = vec![e(0, 1), e(0, 2), e(0, 3), e(0, 4), e(1, 5), e(2, 5), e(3, 5), e(4, 5)];
        let s = schedule(6, &fan, &[true; 6]);
        // 1 continues 0's stream; 2..4 wait for 0 on side streams; 5 joins four streams.
        assert_eq!(s.programmatic_edges(), vec![(0, 1)]);
        let mut want: Vec<(usize, usize)> = fan.iter().map(|e| (e.from, e.to)).collect();
        want.sort();
        assert_eq!(captured_edges(6, &s), want, "PDL changes edge types, never the edge set");
        for (_, to, programmatic) in s.captured_edges() {
            let in_degree = s.captured_edges().iter().filter(|e| e.1 == to).count();
            assert!(!programmatic || in_degree == 1, "a programmatic edge is its target's only dependency");
        }

        let chain = vec![e(0, 1), e(1, 2), e(2, 3)];
        let s = schedule(4, &chain, &[true, true, false, true]);
        assert_eq!(s.programmatic_edges(), vec![(0, 1), (2, 3)], "a node with pdl = false keeps a full edge");
        let s = schedule(4, &chain, &[false; 4]);
        assert!(s.programmatic_edges().is_empty());
        // Two predecessors on one stream's tail and another stream: a full (plain) launch.
        let s = schedule(3, &[e(0, 2), e(1, 2)], &[true; 3]);
        assert!(s.programmatic_edges().is_empty(), "{s:?}");
    }

    #[test]
    fn serial_schedule_is_a_path_in_file_order() {
        let s = serial_schedule(5, &[true, true, false, true, true]);
        assert_eq!((s.side_streams, s.events), (0, 0));
        let edges = captured_edges(5, &s);
        assert_eq!(edges, vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(s.programmatic_edges(), vec![(0, 1), (2, 3), (3, 4)]);
    }
}
