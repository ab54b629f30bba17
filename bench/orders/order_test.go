package orders

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Order is one row, shaped like the reference page's orders: about 180
// bytes of JSON each, 44 MB for 250,000 of them.
type Order struct {
	ID        int64    `json:"id" msgpack:"id"`
	UserID    int64    `json:"user_id" msgpack:"user_id"`
	Email     string   `json:"email" msgpack:"email"`
	Amount    float64  `json:"amount" msgpack:"amount"`
	Status    string   `json:"status" msgpack:"status"`
	CreatedAt string   `json:"created_at" msgpack:"created_at"`
	Tags      []string `json:"tags" msgpack:"tags"`
	Note      string   `json:"note" msgpack:"note"`
}

// Summary is the small result a task sends back instead of the rows.
type Summary struct {
	Rows   int     `msgpack:"rows"`
	Amount float64 `msgpack:"amount"` // the amounts added in row order
}

// summarize adds up rows in order, the same way wherever it runs, so that
// every mode's float sum can be compared exactly.
func summarize(rows []Order) Summary {
	s := Summary{Rows: len(rows)}
	for i := range rows {
		s.Amount += rows[i].Amount
	}
	return s
}

var (
	statuses = []string{"pending", "paid", "shipped", "delivered", "refunded"}
	tagSet   = []string{"priority", "gift", "wholesale", "fragile", "repeat"}
	notes    = []string{
		"",
		"Leave at the door.",
		"Call before delivery.",
		"Gift wrap, no invoice.",
	}
	epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
)

// makeOrders returns n rows, the same n rows on every call: a fixed seed,
// and amounts in whole cents so that JSON carries them exactly.
func makeOrders(n int) []Order {
	rng := rand.New(rand.NewPCG(4, uint64(n)))
	rows := make([]Order, n)
	for i := range rows {
		user := 10_000 + rng.Int64N(90_000)
		tags := make([]string, rng.IntN(3))
		for j := range tags {
			tags[j] = tagSet[rng.IntN(len(tagSet))]
		}
		rows[i] = Order{
			ID:        int64(1_000_000 + i),
			UserID:    user,
			Email:     fmt.Sprintf("user%d@mail.io", user),
			Amount:    float64(rng.Int64N(500_000)) / 100,
			Status:    statuses[rng.IntN(len(statuses))],
			CreatedAt: epoch.Add(time.Duration(i) * 37 * time.Second).Format(time.RFC3339),
			Tags:      tags,
			Note:      notes[rng.IntN(len(notes))],
		}
	}
	return rows
}

// dataset is n rows, their JSON, and the summary every mode must reach.
type dataset struct {
	rows []Order
	json []byte
	want Summary
}

var datasets sync.Map // n → *dataset, built once per size and process

// ordersJSON returns the dataset of n rows, building it on first use.
func ordersJSON(n int) (*dataset, error) {
	if d, ok := datasets.Load(n); ok {
		return d.(*dataset), nil
	}
	rows := makeOrders(n)
	data, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	d, _ := datasets.LoadOrStore(n, &dataset{rows: rows, json: data, want: summarize(rows)})
	return d.(*dataset), nil
}
