package events_test

import (
	"fmt"

	"github.com/ralph-loop/ralph/events"
)

func ExampleParseTags() {
	text := "Done. Example of the syntax:\n" +
		"```\n<event topic=\"example\">ignored</event>\n```\n" +
		"<event topic=\"build.done\" target='reviewer'>\ntests: pass\nlint: pass\n</event>\n"
	for _, tag := range events.ParseTags(text) {
		fmt.Printf("%s -> %s: %q\n", tag.Topic, tag.Target, tag.Payload)
	}
	// Output:
	// build.done -> reviewer: "tests: pass\nlint: pass"
}

func ExampleRouter_Route() {
	router := events.NewRouter([]events.Subscription{
		{Hat: "builder", Triggers: []string{"task.*"}},
		{Hat: "reviewer", Triggers: []string{"*.done"}},
		{Hat: "coordinator", Triggers: []string{"*"}},
	})
	fmt.Println(router.Route(events.Event{Topic: "task.start"}))
	fmt.Println(router.Route(events.Event{Topic: "build.done"}))
	fmt.Println(router.Route(events.Event{Topic: "LOOP_COMPLETE"}))
	fmt.Println(router.Route(events.Event{Topic: "build.done", Target: "builder"}))
	// Output:
	// [builder]
	// [reviewer]
	// [coordinator]
	// [builder]
}

func ExampleValidateTopic() {
	fmt.Println(events.ValidateTopic("build done"))
	// Output:
	// invalid topic "build done": contains whitespace at byte 5 (join words with '.', '_' or '-', e.g. "build.done")
}
