package linear

import (
	"fmt"
	"slices"
	"strings"
)

// matches reports whether obj, a whole object of the fake's (every field
// its type's fixture has), passes a Linear filter (IssueFilter,
// TeamFilter, UserFilter, …): and/or of filters, a comparator on a
// scalar field, a filter of a nested object, some/every of a
// connection's nodes. What the fake does not know is an error, so a
// client is never answered as if a filter it sent had been applied.
func matches(obj map[string]any, filter map[string]any) (bool, error) {
	for key, cond := range filter {
		ok, err := matchKey(obj, key, cond)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matchKey(obj map[string]any, key string, cond any) (bool, error) {
	switch key {
	case "and", "or":
		subs, ok := cond.([]any)
		if !ok {
			return false, fmt.Errorf("filter %s: not a list", key)
		}
		for _, s := range subs {
			sub, ok := s.(map[string]any)
			if !ok {
				return false, fmt.Errorf("filter %s: not a list of filters", key)
			}
			m, err := matches(obj, sub)
			if err != nil {
				return false, err
			}
			if m == (key == "or") {
				return m, nil
			}
		}
		return key == "and", nil
	}
	c, ok := cond.(map[string]any)
	if !ok {
		return false, fmt.Errorf("filter %s: not an object", key)
	}
	v, has := obj[key]
	if !has {
		return false, fmt.Errorf("filter on %q, a field %q has not (or the fake does not filter on)", key, obj[typename])
	}
	switch v := v.(type) {
	case map[string]any:
		if nodes, ok := v["nodes"].([]any); ok {
			return matchNodes(key, nodes, c)
		}
		return matches(v, c)
	case nil:
		return compare(key, nil, c)
	}
	return compare(key, v, c)
}

// matchNodes applies a collection filter: some or every node matches.
func matchNodes(key string, nodes []any, cond map[string]any) (bool, error) {
	for q, sub := range cond {
		f, ok := sub.(map[string]any)
		if !ok || q != "some" && q != "every" {
			return false, fmt.Errorf("filter %s.%s: the fake filters a collection with some or every", key, q)
		}
		count := 0
		for _, n := range nodes {
			m, err := matches(n.(map[string]any), f)
			if err != nil {
				return false, err
			}
			if m {
				count++
			}
		}
		if q == "some" && count == 0 || q == "every" && count < len(nodes) {
			return false, nil
		}
	}
	return true, nil
}

// compare applies a comparator (StringComparator, IDComparator, …) to a
// scalar.
func compare(key string, v any, cond map[string]any) (bool, error) {
	s, isString := v.(string)
	for op, want := range cond {
		var ok bool
		switch op {
		case "eq":
			ok = v == want
		case "neq":
			ok = v != want
		case "eqIgnoreCase":
			w, _ := want.(string)
			ok = isString && strings.EqualFold(s, w)
		case "in", "nin":
			list, _ := want.([]any)
			ok = slices.Contains(list, v) == (op == "in")
		case "null":
			ok = (v == nil) == (want == true)
		default:
			return false, fmt.Errorf("filter %s: the fake does not compare with %q", key, op)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}
