//! The whole function, in memory: `krm_merge::krm::run_resource_list` (KRM mode) on a
//! ResourceList.
//!
//! The first byte chooses the input: even, the rest is stdin as it is (any text, any shape);
//! odd, the rest is a functionConfig, indented under `functionConfig:` of a ResourceList with a
//! few fixed items. Whatever comes in: no panic, the output a ResourceList that parses, and on
//! an error result the input's items come back as they came in. (Bytes that are not UTF-8 never
//! reach the library: the command line reports them.)
#![no_main]

use krm_merge::krm::{run_resource_list, Input};
use krm_merge::yaml;
use libfuzzer_sys::fuzz_target;

const ITEMS: &str = "\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # the front end
    labels: {app: web}
  spec:
    replicas: 1
    template:
      spec:
        containers:
        - name: app
          image: nginx
          ports:
          - containerPort: 80
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cfg
    namespace: prod
  data:
    key: 'value'
- apiVersion: example.com/v1
  kind: Foo
  metadata:
    name: foo
  spec:
    items: [{name: a, v: 1}, {name: b}]
functionConfig:
";

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let input: Vec<u8> = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let mut v = ITEMS.as_bytes().to_vec();
        for line in rest.split(|b| *b == b'\n') {
            v.extend_from_slice(b"  ");
            v.extend_from_slice(line);
            v.push(b'\n');
        }
        v
    };
    let Ok(src) = std::str::from_utf8(&input) else {
        return;
    };
    let output = run_resource_list(src);
    let failed = output.failed();
    let out = output.text;
    let docs =
        yaml::parse_stream(&out).unwrap_or_else(|e| panic!("stdout does not parse: {e}\n{out}"));
    let root = docs
        .iter()
        .find_map(|d| d.root.as_ref())
        .unwrap_or_else(|| panic!("stdout has no document\n{out}"));
    assert_eq!(root.str_at(&["kind"]), Some("ResourceList"), "{out}");
    if !failed {
        return;
    }
    // On error, the items as they came in.
    let Ok(before) = Input::read(src) else {
        return;
    };
    if !before.is_resource_list() {
        return;
    }
    let after = root
        .get("items")
        .map(|i| i.items().to_vec())
        .unwrap_or_default();
    assert_eq!(
        before.items.len(),
        after.len(),
        "items lost on error\n{out}"
    );
    for (b, a) in before.items.iter().zip(&after) {
        assert!(b.node.same_data(a), "an item changed on error\n{out}");
    }
});
