package linear

// The operations ralph sends, each a constant with the structs of its
// variables and of its data. The fields are those of Linear's schema
// (packages/sdk/src/schema.graphql in github.com/linear/linear).

// issueFields are what ralph reads of an issue, in every operation that
// returns one. Linear's complexity limits count a connection's first
// times what it selects, whatever comes back: so an issue's labels and
// relations are read 20 at most, and issues 25 a page.
const issueFields = `id identifier title description url priority createdAt
state { id name type }
assignee { id }
labels(first: 20) { nodes { name } }
inverseRelations(first: 20) { nodes { type issue { identifier state { type } } } }`

// issueNode is an issue as issueFields selects it.
type issueNode struct {
	ID          string  `json:"id"`
	Identifier  string  `json:"identifier"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	URL         string  `json:"url"`
	// Priority is Linear's: 0 none, 1 urgent, 2 high, 3 medium, 4 low
	// (a Float in the schema).
	Priority  float64   `json:"priority"`
	CreatedAt string    `json:"createdAt"`
	State     stateNode `json:"state"`
	Assignee  *struct {
		ID string `json:"id"`
	} `json:"assignee"`
	Labels struct {
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	} `json:"labels"`
	// InverseRelations are the relations other issues have to this one:
	// of type "blocks", the other issue blocks this one.
	InverseRelations struct {
		Nodes []struct {
			Type  string `json:"type"`
			Issue struct {
				Identifier string `json:"identifier"`
				State      struct {
					Type string `json:"type"`
				} `json:"state"`
			} `json:"issue"`
		} `json:"nodes"`
	} `json:"inverseRelations"`
}

// stateNode is a workflow state; its type is one of triage, backlog,
// unstarted, started, completed, canceled.
type stateNode struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Position float64 `json:"position"`
}

type pageInfo struct {
	HasNextPage bool    `json:"hasNextPage"`
	EndCursor   *string `json:"endCursor"`
}

// stringComparator and idComparator are Linear's filters of a string and
// an id field; unset members are left out.
type stringComparator struct {
	Eq           string   `json:"eq,omitempty"`
	EqIgnoreCase string   `json:"eqIgnoreCase,omitempty"`
	In           []string `json:"in,omitempty"`
}

type idComparator struct {
	Eq string   `json:"eq,omitempty"`
	In []string `json:"in,omitempty"`
}

// issueFilter is the IssueFilter of the issues Open lists: the team's,
// in the states chosen, with every label (one member of And each).
type issueFilter struct {
	Team   *teamFilter   `json:"team,omitempty"`
	State  *stateFilter  `json:"state,omitempty"`
	Labels *labelsFilter `json:"labels,omitempty"`
	And    []issueFilter `json:"and,omitempty"`
}

type teamFilter struct {
	ID  *idComparator     `json:"id,omitempty"`
	Key *stringComparator `json:"key,omitempty"`
}

type stateFilter struct {
	ID *idComparator `json:"id,omitempty"`
}

// labelsFilter is an IssueLabelCollectionFilter: some label matches.
type labelsFilter struct {
	Some *labelFilter `json:"some"`
}

type labelFilter struct {
	Name *stringComparator `json:"name"`
}

// userFilter is a UserFilter: any of Or.
type userFilter struct {
	Email       *stringComparator `json:"email,omitempty"`
	DisplayName *stringComparator `json:"displayName,omitempty"`
	Name        *stringComparator `json:"name,omitempty"`
	Or          []userFilter      `json:"or,omitempty"`
}

// viewerQuery asks whose the API key is.
const viewerQuery = `query Viewer { viewer { id } }`

type viewerData struct {
	Viewer struct {
		ID string `json:"id"`
	} `json:"viewer"`
}

// usersQuery finds the users a filter matches: the config's assignee.
const usersQuery = `query Users($filter: UserFilter) {
users(filter: $filter, first: 10) { nodes { id name displayName email } }
}`

type usersVars struct {
	Filter userFilter `json:"filter"`
}

type usersData struct {
	Users struct {
		Nodes []struct {
			ID          string `json:"id"`
			Name        string `json:"name"`
			DisplayName string `json:"displayName"`
			Email       string `json:"email"`
		} `json:"nodes"`
	} `json:"users"`
}

// teamQuery finds the team by its key, with its workflow states.
const teamQuery = `query Team($filter: TeamFilter) {
teams(filter: $filter, first: 10) { nodes { id key name states(first: 100) { nodes { id name type position } } } }
}`

type teamVars struct {
	Filter teamFilter `json:"filter"`
}

type teamData struct {
	Teams struct {
		Nodes []team `json:"nodes"`
	} `json:"teams"`
}

// team is a team and its workflow states.
type team struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Name   string `json:"name"`
	States struct {
		Nodes []stateNode `json:"nodes"`
	} `json:"states"`
}

// issuesQuery lists a page of the issues a filter matches.
const issuesQuery = `query Issues($filter: IssueFilter, $first: Int, $after: String) {
issues(filter: $filter, first: $first, after: $after, orderBy: createdAt) {
nodes { ` + issueFields + ` }
pageInfo { hasNextPage endCursor }
}
}`

type issuesVars struct {
	Filter issueFilter `json:"filter"`
	First  int         `json:"first"`
	After  *string     `json:"after"`
}

type issuesData struct {
	Issues struct {
		Nodes    []issueNode `json:"nodes"`
		PageInfo pageInfo    `json:"pageInfo"`
	} `json:"issues"`
}

// issueQuery gets one issue, by its identifier (ENG-12) or its id.
const issueQuery = `query Issue($id: String!) { issue(id: $id) { ` + issueFields + ` } }`

type issueVars struct {
	ID string `json:"id"`
}

type issueData struct {
	Issue issueNode `json:"issue"`
}

// issueUpdateMutation sets an issue's assignee or state. Input's members
// are set or null as the change needs: a null assigneeId unassigns.
const issueUpdateMutation = `mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {
issueUpdate(id: $id, input: $input) { success issue { id identifier } }
}`

type issueUpdateVars struct {
	ID    string         `json:"id"`
	Input map[string]any `json:"input"`
}

type issueUpdateData struct {
	IssueUpdate struct {
		Success bool `json:"success"`
	} `json:"issueUpdate"`
}

// commentCreateMutation comments on an issue.
const commentCreateMutation = `mutation CommentCreate($input: CommentCreateInput!) {
commentCreate(input: $input) { success comment { id } }
}`

type commentCreateVars struct {
	Input struct {
		IssueID string `json:"issueId"`
		Body    string `json:"body"`
	} `json:"input"`
}

type commentCreateData struct {
	CommentCreate struct {
		Success bool `json:"success"`
	} `json:"commentCreate"`
}
