// The harness's shared vocabulary (docs/executor-protocol.md section 12), read once at start-up from the file the
// harness names in HARNESS_VOCABULARY (section 1): the event names and their families are not copied here.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// eventFamilies maps each unified-format event name to the family an `events` request asks for.
var eventFamilies = map[string]string{}

func loadVocabulary() error {
	path := os.Getenv("HARNESS_VOCABULARY")
	if path == "" {
		return fmt.Errorf("HARNESS_VOCABULARY names no vocabulary file (the harness sets it, docs/executor-protocol.md section 1)")
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var vocabulary struct {
		Events map[string][]string `json:"events"`
	}
	if err := json.Unmarshal(text, &vocabulary); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for family, names := range vocabulary.Events {
		for _, name := range names {
			eventFamilies[name] = family
		}
	}
	return nil
}
